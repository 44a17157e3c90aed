// A hold: its seats and places of general admission, a countdown to expires_at, a button to give the seats
// back (DELETE /v1/holds/{id}), and checkout (POST /v1/orders) with Payrail's
// test cards.
//
// Checkout sends one Idempotency-Key per attempt to pay (crypto.randomUUID())
// and the same key again on every automatic retry of that attempt, so that a
// retry can never charge twice. The answers:
//   201 confirmed, with tickets  → the tickets page
//   402 payment-declined         → the hold is kept; choose another card (a new attempt, a new key)
//   503 payment-unavailable …    → nothing charged: wait Retry-After, retry with the same key,
//                                   at most AUTO_RETRIES times (each spends one of the
//                                   buyer's payment attempts); then the buyer chooses
//   429 rate-limited             → too many attempts to pay: nothing charged; wait, then choose again
//   202 pending                  → the outcome is unknown: poll GET /v1/orders/{id} until it settles

import { api, ApiError, get, readEvent, readSeatMap, retrying } from "../api.js";
import { h, isAbort, radio, replace, sleep } from "../dom.js";
import { backoffMs } from "../retry.js";
import { formatClock, formatMoney, formatTime, plural } from "../format.js";
import { forgetHold } from "../holds.js";
import { clearNotice, countdown, report, showMessage, showProblem } from "../notice.js";
import { go, requireUser, setTitle } from "../router.js";
import { currentUser } from "../session.js";
import { heldWords, placesText } from "../places.js";
import { seatName } from "../seatmap.js";

/**
 * How many times one attempt to pay is retried by itself after a failure that
 * charged nothing (or a lost connection): each retry reaches Payrail and so
 * spends one of the buyer's payment attempts (checkout-buyer, 5 per 10
 * minutes). A refusal that spent nothing (every checkout slot busy) is
 * retried without counting.
 */
const AUTO_RETRIES = 2;

/** Payrail's test tokens, offered as cards. */
const CARDS = [
  ["tok_visa", "Visa ending 4242 — pays"],
  ["tok_declined", "Test card that declines"],
  ["tok_error", "Test card that fails"],
];

/**
 * @typedef {import("../types.js").Hold} Hold
 * @typedef {import("../types.js").Order} Order
 * @typedef {{progress: (text: string) => void, waiting: (yes: boolean) => void}} CheckoutUI
 */

/** @type {Partial<Record<Hold["status"], string>>} */
const STATUS_WORDS = {
  expired: "This hold has expired: its seats are back on sale.",
  released: "This hold was released: its seats are back on sale.",
  converted: "This hold was paid for: your tickets are ready.",
};

/** @type {import("../router.js").Page} */
export async function holdPage({ main, params, signal }) {
  setTitle(main, "Your hold");
  const user = currentUser();
  if (!requireUser(main, "buyer") || !user) return;
  const holdPath = `/v1/holds/${encodeURIComponent(params.id)}`;
  /** @type {Hold} */
  const hold = await retrying(() => get(holdPath, { signal }), signal);
  const [event, seatMap] = await Promise.all([readEvent(hold.event_id, signal), readSeatMap(hold.event_id, signal)]);
  const seats = seatMap.seats.filter((s) => hold.seat_ids.includes(s.id));
  const places = hold.general.reduce((n, g) => n + g.quantity, 0);
  const priceOf = new Map((event.sections ?? []).map((s) => [s.id, s.price_cents]));
  const total = formatMoney(hold.total_cents, hold.currency);

  main.append(
    h("p", { class: "lead" }, h("a", { href: `#/events/${event.id}` }, event.name), ` · ${event.venue}`),
    h("section", { class: "panel", "aria-labelledby": "held-heading" },
      h("h2", { id: "held-heading" }, `${heldWords(seats.length, places)} · ${total}`),
      h("ul", { class: "seat-list" },
        seats.map((s) => h("li", {}, `${seatName(s)} — ${formatMoney(s.price_cents, hold.currency)}`)),
        hold.general.map((g) => h("li", {}, `${placesText(g.quantity, g.section)} — ${formatMoney(priceOf.get(g.section_id) ?? 0, hold.currency)} each`))),
      places > 0 ? h("p", { class: "hint" }, "A place of general admission has no seat number: any place of its section is yours at the door.") : null));

  if (hold.status !== "active" || new Date(hold.expires_at) <= new Date()) {
    forgetHold(user, hold.event_id);
    const status = hold.status === "active" ? "expired" : hold.status;
    main.append(h("p", { class: "panel" }, STATUS_WORDS[status] || `This hold is ${status}.`, " ",
      status === "converted" ? h("a", { href: "#/tickets" }, "See my tickets.")
        : h("a", { href: `#/events/${event.id}` }, "Choose seats again.")));
    return;
  }

  // --- The countdown to expires_at -------------------------------------------
  const left = h("span", { role: "timer", "aria-live": "off" });
  const expiry = h("p", { class: "expiry" }, `Held for you until ${formatTime(hold.expires_at)}: `, left, " left.");
  main.append(expiry);
  let expired = false;
  let paying = false; // a checkout is under way: the hold cannot expire under it
  const tick = () => {
    const ms = Date.parse(hold.expires_at) - Date.now();
    left.textContent = formatClock(ms);
    if (ms <= 0 && !expired && !paying) {
      expired = true;
      clearInterval(timer);
      forgetHold(user, hold.event_id);
      replace(expiry, STATUS_WORDS.expired, " ", h("a", { href: `#/events/${event.id}` }, "Choose seats again."));
      form.hidden = true;
      releaseButton.hidden = true;
    }
  };
  const timer = setInterval(tick, 1000);
  signal.addEventListener("abort", () => clearInterval(timer));

  // --- Checkout ---------------------------------------------------------------
  const payButton = h("button", { type: "submit", class: "primary" }, `Pay ${total}`);
  const stopButton = h("button", { type: "button", class: "secondary", hidden: true }, "Stop trying");
  const progress = h("p", { role: "status", class: "progress" });
  const form = h("form", { class: "form checkout" },
    h("fieldset", { class: "choices" },
      h("legend", {}, "Pay with"),
      CARDS.map(([token, label], i) => radio("card", token, label, i === 0))),
    payButton, progress, stopButton);
  const releaseButton = h("button", { type: "button", class: "secondary" },
    places === 0 ? "Give the seats back" : seats.length === 0 ? "Give the places back" : "Give them back");
  main.append(h("section", { "aria-labelledby": "pay-heading" }, h("h2", { id: "pay-heading" }, "Checkout"), form),
    h("div", { class: "actions" }, releaseButton));
  tick();

  // While a payment waits to be retried, the buyer may stop it (and choose
  // another card: a new attempt with a new key).
  /** @type {AbortController | null} */
  let attempt = null;
  /** @type {CheckoutUI} */
  const ui = {
    progress: (text) => { progress.textContent = text; },
    waiting: (yes) => { stopButton.hidden = !yes; },
  };
  stopButton.addEventListener("click", () => attempt?.abort(new DOMException("stopped", "AbortError")));

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (paying) return;
    paying = true;
    payButton.disabled = true;
    releaseButton.disabled = true;
    clearNotice();
    const current = (attempt = new AbortController());
    signal.addEventListener("abort", () => current.abort(signal.reason), { once: true });
    try {
      const order = await checkout(hold.id, hold.expires_at, String(new FormData(form).get("card")), ui, current.signal);
      if (order?.status === "confirmed") {
        forgetHold(user, hold.event_id);
        go("/tickets", `Payment confirmed: ${plural(order.tickets.length, "ticket")} for ${event.name}.`);
        return;
      }
    } catch (err) {
      if (isAbort(err) && !signal.aborted) {
        showMessage("The payment was stopped and nothing was charged. Your seats are still held: choose a card and pay again.");
      } else report(err);
    } finally {
      paying = false;
      ui.progress("");
      ui.waiting(false);
      payButton.disabled = false;
      releaseButton.disabled = false;
      tick();
    }
  });

  releaseButton.addEventListener("click", async () => {
    releaseButton.disabled = true;
    try {
      await retrying(() => api("DELETE", holdPath, { signal }), signal);
      forgetHold(user, hold.event_id);
      go(`/events/${event.id}`, places === 0 ? "Your seats were given back." : `Your ${heldWords(seats.length, places)} were given back.`);
    } catch (err) {
      report(err);
      releaseButton.disabled = false;
    }
  });
}

/**
 * One attempt to pay for the hold with a card: returns the order when it is
 * settled (confirmed), or null when the buyer should choose again (the
 * problem is shown). Retries by itself, with the same Idempotency-Key, while
 * the answer says it may.
 * @param {string} holdId
 * @param {string} holdExpiresAt the hold's end, for "your seats are still held for 8:12"
 * @param {string} token the card's payment token
 * @param {CheckoutUI} ui
 * @param {AbortSignal} signal
 * @returns {Promise<Order | null>}
 */
async function checkout(holdId, holdExpiresAt, token, ui, signal) {
  const key = crypto.randomUUID(); // this attempt's key, kept across its retries
  const body = { hold_id: holdId, payment_token: token };
  ui.progress("Paying…");
  let retries = 0; // the automatic retries that reached (or may have reached) Payrail
  for (let attempt = 1; ; attempt += 1) {
    /** @type {import("../api.js").Answer<Order>} */
    let answer;
    try {
      answer = await api("POST", "/v1/orders", { body, headers: { "Idempotency-Key": key }, signal });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      switch (err.slug || (err.status === 0 ? "network" : "")) {
        case "payment-declined":
          showProblem(err, "", { holdExpiresAt });
          return null;
        case "rate-limited": // too many attempts to pay: nothing was tried or charged
          showProblem(err, "Nothing was charged. Please wait before you try to pay again; your seats stay held until the hold's time runs out.");
          if (err.retryAfterMs) countdown(err.retryAfterMs, "You can try again", signal).catch(() => {});
          return null;
        case "payment-unavailable":
        case "service-overloaded":
        case "service-unavailable":
        case "network": {
          // Nothing was charged (or, for the last two, we cannot know): the
          // same key makes the retry safe either way. Only a busy instance
          // (service-overloaded) spent no payment attempt.
          if (err.slug !== "service-overloaded" && ++retries > AUTO_RETRIES) {
            showProblem(err, "", { holdExpiresAt });
            return null;
          }
          const next = err.slug === "service-overloaded" ? "" : ` (try ${retries + 1} of ${AUTO_RETRIES + 1})`;
          ui.progress(`Waiting to try the payment again${next}…`);
          showProblem(err, "Your seats are still held. The payment will be tried again by itself, with the same card.", { holdExpiresAt });
          const wait = err.retryAfterMs ?? backoffMs(attempt);
          ui.waiting(true);
          await countdown(wait, "Trying the payment again", signal);
          ui.waiting(false);
          clearNotice();
          ui.progress(`Paying…${next}`);
          continue;
        }
        case "idempotency-in-progress": // the first request of this key still runs
          await sleep(1000, signal);
          continue;
        default:
          throw err;
      }
    }
    if (answer.status === 201) return answer.data;
    // 202: the charge's outcome is unknown for now. The order settles by
    // itself (recovery asks Payrail); poll it, backing off to 10 s.
    return await settle(answer.data, ui, signal);
  }
}

/**
 * Polls a pending order until it is settled; returns it when confirmed.
 * @param {Order} order
 * @param {CheckoutUI} ui
 * @param {AbortSignal} signal
 * @returns {Promise<Order | null>}
 */
async function settle(order, ui, signal) {
  let wait = 1000;
  while (order.status === "pending") {
    ui.progress("Confirming your payment… This can take a minute; you can leave this page and check My tickets later.");
    await sleep(wait, signal);
    wait = Math.min(10_000, wait * 2);
    const id = order.id;
    order = await retrying(() => get(`/v1/orders/${id}`, { signal }), signal);
  }
  ui.progress("");
  /** @type {Partial<Record<Order["status"], string>>} */
  const words = {
    declined: "The payment was declined. Your seats are still held: choose another card.",
    failed: "The payment failed and nothing was charged. Your seats are still held: try again.",
    released: "The payment could not be confirmed, so nothing stays charged and the seats went back on sale. Choose seats again.",
    refunded: "The payment was refunded, so these tickets admit no one. Choose seats again.",
  };
  if (order.status !== "confirmed") {
    showProblem({ problem: { title: "Payment not completed", detail: words[order.status] || `The order is ${order.status}.` } });
    return null;
  }
  return order;
}
