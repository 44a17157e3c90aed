// An event: its details, the waiting room when it has one, and the seat map,
// kept live by the stream (seatstream.js). A buyer chooses 1 to 10 seats and
// holds them (POST /v1/holds), then goes on to the hold's page to pay.

import { api, ApiError, get, readEvent, retrying } from "../api.js";
import { h, isAbort } from "../dom.js";
import { formatDateTime, formatMoney, formatTime, plural } from "../format.js";
import { forgetHold, rememberedHold, rememberHold } from "../holds.js";
import { clearNotice, countdown, report, showMessage } from "../notice.js";
import { go, setTitle } from "../router.js";
import { currentUser } from "../session.js";
import { seatLegend, SeatMap, seatName } from "../seatmap.js";
import { watchSeats } from "../seatstream.js";
import { waitingRoom } from "../waitroom.js";

const MAX_SEATS = 10; // a hold takes 1 to 10 seats

/** @type {import("../router.js").Page} */
export async function eventPage({ main, params, signal }) {
  const heading = setTitle(main, "Event");
  const id = params.id;
  const event = await readEvent(id, signal);
  heading.textContent = event.name;
  document.title = `${event.name} · Stagedoor`;

  const user = currentUser();
  const buyer = user?.kind === "buyer";
  const onSaleLater = new Date(event.on_sale_at) > new Date();
  main.append(h("p", { class: "lead" }, event.venue, " · ",
    h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))));
  if (event.status === "cancelled") {
    main.append(h("p", { class: "status-cancelled" }, "This event is cancelled: nothing more is sold, and every buyer is refunded."));
  } else if (onSaleLater) main.append(h("p", { class: "badge" }, `On sale from ${formatDateTime(event.on_sale_at)}`));
  if (event.description) main.append(h("p", { class: "description" }, event.description));
  if (event.status !== "cancelled") {
    main.append(h("p", { class: "muted" }, event.refunds_until
      ? `Tickets can be refunded until ${formatDateTime(event.refunds_until)}.`
      : "This event does not offer refunds."));
  }

  // The buyer's current hold of this event, if this browser remembers one.
  const myHold = buyer ? await currentHold(user, id, signal) : null;
  if (myHold) {
    main.append(h("section", { class: "panel", "aria-label": "Your hold" },
      h("p", {}, `You hold ${plural(myHold.seat_ids.length, "seat")} of this event until ${formatTime(myHold.expires_at)}. `,
        h("a", { href: `#/holds/${myHold.id}` }, "Go to checkout"))));
  }

  // --- The seat selection -------------------------------------------------
  let admitted = !event.waiting_room; // events without a room need no admission
  let holding = false; // a hold request is on its way (or waiting to be retried)
  const summary = h("p", { role: "status", class: "summary" });
  const mode = h("p", { role: "status", class: "muted live-mode" }, "Loading the seat map…");
  const holdButton = h("button", { type: "button", class: "primary", disabled: true }, "Hold seats");
  const cancelButton = h("button", { type: "button", class: "secondary", hidden: true }, "Cancel");

  const map = new SeatMap({
    currency: event.currency,
    max: MAX_SEATS,
    canChoose: () => {
      if (!user) return "Log in as a buyer to choose seats.";
      if (!buyer) return "Organizers cannot buy tickets: log in as a buyer.";
      if (!admitted) return "Wait for your turn in the queue to choose seats.";
      if (holding) return "Your seats are being held: wait a moment.";
      return null;
    },
    onToggle: () => updateSummary(),
    onRefused: (message) => { summary.textContent = message; },
  });
  if (myHold) map.setMine(myHold.seat_ids);

  const helpId = "seatmap-help";
  const seatSection = h("section", { class: "seats", "aria-labelledby": "seats-heading" },
    h("h2", { id: "seats-heading" }, "Seats"),
    h("p", { id: helpId, class: "hint" },
      "Tab to the map, move between seats with the arrow keys, and press Space or Enter to choose a seat. Up to 10 seats."),
    seatLegend(),
    mode,
    h("div", { class: "seatmap-scroll" }, map.element),
    summary,
    h("div", { class: "actions" }, holdButton, cancelButton));
  map.element.setAttribute("aria-describedby", helpId);
  if (!user) {
    const next = `?next=${encodeURIComponent(`/events/${id}`)}`;
    seatSection.append(h("p", {}, h("a", { href: `#/login${next}` }, "Log in"),
      " or ", h("a", { href: `#/signup${next}` }, "sign up"), " to hold seats."));
  }

  function updateSummary() {
    const seats = map.chosenSeats();
    const total = seats.reduce((sum, s) => sum + s.price_cents, 0);
    summary.textContent = seats.length === 0 ? "No seats chosen."
      : `${plural(seats.length, "seat")} chosen: ${seats.map(seatName).join("; ")}. Total ${formatMoney(total, event.currency)}.`;
    holdButton.textContent = seats.length === 0 ? "Hold seats"
      : `Hold ${plural(seats.length, "seat")} · ${formatMoney(total, event.currency)}`;
    holdButton.disabled = seats.length === 0 || holding;
  }
  updateSummary();

  // Live statuses: started when the seats are first shown.
  let watching = false;
  function showSeats() {
    seatSection.hidden = false;
    if (watching) return;
    watching = true;
    watchSeats(id, {
      snapshot: (m) => lost(map.setSeats(m.seats)),
      changes: (m) => lost(map.applyChanges(m.seats)),
      mode: (how) => {
        mode.textContent = how === "live" ? "Seat statuses update live."
          : "Live updates are interrupted: the map is refreshed every 2 seconds.";
      },
      error: () => {},
    }, signal);
  }
  /** @param {import("../types.js").Seat[]} seats taken from the reader's choice */
  function lost(seats) {
    if (seats.length === 0) return;
    summary.textContent = `Someone else just took ${seats.map(seatName).join("; ")}. Choose other seats.`;
    updateSummary();
  }

  // --- Holding --------------------------------------------------------------
  /** @type {AbortController | null} */
  let attempt = null; // aborts a hold that waits to be retried
  cancelButton.addEventListener("click", () => attempt?.abort(new DOMException("cancelled", "AbortError")));
  holdButton.addEventListener("click", async () => {
    const seats = map.chosenSeats();
    if (seats.length === 0 || !user) return;
    clearNotice();
    holding = true;
    const current = (attempt = new AbortController());
    signal.addEventListener("abort", () => current.abort(signal.reason), { once: true });
    cancelButton.hidden = false;
    updateSummary();
    summary.textContent = `Holding ${plural(seats.length, "seat")}…`;
    const body = { event_id: id, seat_ids: seats.map((s) => s.id) };
    try {
      // The hold the buyer asked for is retried by itself after a 429 or 503
      // (retrying shows which limit refused, and counts down).
      /** @type {import("../api.js").Answer<import("../types.js").Hold>} */
      const { data: hold } = await retrying(() => api("POST", "/v1/holds", { body, signal: current.signal }), current.signal);
      rememberHold(user, hold);
      map.clearChoice();
      go(`/holds/${hold.id}`);
      return;
    } catch (err) {
      if (isAbort(err)) {
        if (!signal.aborted) showMessage("Holding was cancelled: your seats are still chosen.");
      } else if (err instanceof ApiError && err.slug === "seats-unavailable") {
        const taken = err.problem.unavailable_seat_ids || [];
        lost(map.applyChanges(taken.map((seatId) => ({ id: seatId, status: "held" }))));
        report(err, "Those seats were just taken: choose others.");
      } else if (err instanceof ApiError && err.slug === "rehold-cooldown") {
        // Seats this buyer gave back moments ago cool for them only (others
        // may hold them now): the choice stays, and the countdown says when.
        report(err, "You gave these seats back a moment ago. Choose other seats, or hold these again when the countdown ends.");
        if (err.retryAfterMs) countdown(err.retryAfterMs, "You can hold them again", signal).catch(() => {});
      } else if (err instanceof ApiError && err.slug === "not-admitted") {
        report(err, "Your turn in the waiting room is over: join the queue again.");
        admitted = false;
        room?.recheck().catch(report);
      } else {
        report(err);
      }
    } finally {
      holding = false;
      cancelButton.hidden = true;
      updateSummary();
    }
  });

  // --- The waiting room -----------------------------------------------------
  /** @type {ReturnType<typeof waitingRoom> | null} */
  let room = null;
  if (event.waiting_room && buyer) {
    room = waitingRoom(id, {
      signal,
      onAdmitted: () => { admitted = true; showSeats(); },
      onLapsed: () => { admitted = false; seatSection.hidden = true; map.clearChoice(); updateSummary(); },
    });
    seatSection.hidden = true;
    main.append(room.element, seatSection);
    await room.start();
  } else if (event.waiting_room && !user) {
    main.append(h("section", { class: "panel queue" },
      h("h2", {}, "Waiting room"),
      h("p", {}, "This sale has a waiting room. ",
        h("a", { href: `#/login?next=${encodeURIComponent(`/events/${id}`)}` }, "Log in"),
        " as a buyer to join the queue.")));
  } else {
    main.append(seatSection);
    showSeats();
  }
}

/**
 * The buyer's remembered hold of the event while it is active, else null (and forgotten).
 * @param {import("../types.js").Principal} user
 * @param {string} eventId
 * @param {AbortSignal} signal
 * @returns {Promise<import("../types.js").Hold | null>}
 */
async function currentHold(user, eventId, signal) {
  const holdId = rememberedHold(user, eventId);
  if (!holdId) return null;
  try {
    /** @type {import("../types.js").Hold} */
    const hold = await get(`/v1/holds/${encodeURIComponent(holdId)}`, { signal });
    if (hold.status === "active" && new Date(hold.expires_at) > new Date()) return hold;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
  }
  forgetHold(user, eventId);
  return null;
}
