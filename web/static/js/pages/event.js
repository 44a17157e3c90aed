// An event: its details, the waiting room when it has one, the seat map, kept
// live by the stream (seatstream.js), and a quantity picker for each section of
// general admission (places.js), whose counts of places left are read again
// every few seconds. A buyer chooses 1 to 10 seats and places in all and holds
// them (POST /v1/holds), then goes on to the hold's page to pay.
//
// The basket bar sticks to the screen's bottom while the seats are in view:
// what is chosen, its total and the Hold button, and the buyer's current hold
// of the event with its countdown and a Pay link. Until the event is read, a
// skeleton of the page's shape holds its place (no layout shift), and the seat
// map's box is reserved from the sections' rows and seats before they come.

import { eventImage } from "../event-image.js";
import { api, ApiError, get, readEvent, retrying } from "../api.js";
import { h, isAbort } from "../dom.js";
import { formatClock, formatDateTime, formatMoney, formatTime, plural } from "../format.js";
import { forgetHold, rememberedHold, rememberHold } from "../holds.js";
import { clearNotice, countdown, report, showMessage } from "../notice.js";
import { go, setTitle } from "../router.js";
import { currentUser } from "../session.js";
import { heldWords, PlacePickers, placesText } from "../places.js";
import { seatLegend, SeatMap, seatName } from "../seatmap.js";
import { watchSeats } from "../seatstream.js";
import { waitingRoom } from "../waitroom.js";

const MAX_SEATS = 10; // a hold takes 1 to 10 seats and places
const RECOUNT_MS = 5000; // how often the places left are read again

/** @type {import("../router.js").Page} */
export async function eventPage({ main, params, signal }) {
  const heading = setTitle(main, "Event");
  const id = params.id;
  const skeleton = eventSkeleton();
  main.append(skeleton);
  const event = await readEvent(id, signal);
  skeleton.remove();
  heading.textContent = event.name;
  document.title = `${event.name} · Stagedoor`;

  const user = currentUser();
  const buyer = user?.kind === "buyer";
  const onSaleLater = new Date(event.on_sale_at) > new Date();
  const picture = eventImage(event); // above the fold: not lazy
  if (picture) main.append(picture);
  main.append(h("p", { class: "lead" }, event.venue, " · ",
    h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))));
  // dashboard: the event's own organizer is pointed to its sales.
  if (user?.kind === "organizer" && user.id === event.organizer_id) {
    main.append(h("p", { class: "panel" }, "This is your event, as buyers see it. ",
      h("a", { href: `#/organizer/events/${event.id}` }, "See its sales")));
  }
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
  /** @type {HTMLElement | null} */
  let holdLine = null; // in the basket bar: the hold, its countdown, Pay
  if (myHold) {
    const places = myHold.general.reduce((n, g) => n + g.quantity, 0);
    const left = h("span", { role: "timer", "aria-live": "off" });
    holdLine = h("p", { class: "basket-hold" },
      h("span", {}, `You hold ${heldWords(myHold.seat_ids.length - places, places)} until ${formatTime(myHold.expires_at)}: `, left, " left."),
      h("a", { href: `#/holds/${myHold.id}`, class: "button primary" }, "Pay"));
    const tick = () => {
      const ms = new Date(myHold.expires_at).getTime() - Date.now();
      left.textContent = formatClock(Math.max(0, ms));
      if (ms <= 0) clearInterval(timer);
    };
    const timer = setInterval(tick, 1000);
    signal.addEventListener("abort", () => clearInterval(timer));
    tick();
  }
  const sections = event.sections ?? [];
  const seated = sections.some((s) => !s.general_admission);
  const general = sections.filter((s) => s.general_admission);

  // --- The seat selection -------------------------------------------------
  let admitted = !event.waiting_room; // events without a room need no admission
  let holding = false; // a hold request is on its way (or waiting to be retried)
  const summary = h("p", { role: "status", class: "summary" });
  const mode = h("p", { role: "status", class: "muted live-mode" }, "Loading the seat map…");
  const what = !seated ? "places" : general.length > 0 ? "tickets" : "seats";
  const holdButton = h("button", { type: "button", class: "primary", disabled: true }, `Hold ${what}`);
  const cancelButton = h("button", { type: "button", class: "secondary", hidden: true }, "Cancel");

  const canChoose = () => {
    if (!user) return `Log in as a buyer to choose ${what}.`;
    if (!buyer) return "Organizers cannot buy tickets: log in as a buyer.";
    if (!admitted) return `Wait for your turn in the queue to choose ${what}.`;
    if (holding) return `Your ${what} are being held: wait a moment.`;
    return null;
  };
  const next = `?next=${encodeURIComponent(`/events/${id}`)}`;
  const map = new SeatMap({
    currency: event.currency,
    max: MAX_SEATS,
    loginHref: user ? null : `#/login${next}`,
    canChoose,
    onToggle: () => updateSummary(),
    onRefused: (message) => { summary.textContent = message; },
  });
  if (myHold) map.setMine(myHold.seat_ids);
  map.reserve(sections);
  map.controls.prepend(mode);
  const pickers = new PlacePickers({
    sections: general,
    currency: event.currency,
    room: () => MAX_SEATS - map.chosenSeats().length - pickers.count(),
    canChoose,
    onChange: () => updateSummary(),
    onRefused: (message) => { summary.textContent = message; },
  });

  const helpId = "seatmap-help";
  const touch = matchMedia("(pointer: coarse)").matches;
  const seatSection = h("section", { class: "seats", "aria-labelledby": "seats-heading" },
    seated ? [
      h("h2", { id: "seats-heading" }, "Seats"),
      h("p", { id: helpId, class: "hint" },
        touch ? "Pinch or tap + to zoom in, drag to look around, and tap a seat to choose it. "
          : "Tab to the map, move between seats with the arrow keys, and press Space or Enter to choose a seat; + and − zoom. ",
        general.length > 0 ? "Up to 10 seats and places in all." : "Up to 10 seats."),
      seatLegend(),
      map.frame,
    ] : null,
    general.length > 0 ? [
      h("h2", { id: seated ? "places-heading" : "seats-heading" }, "General admission"),
      h("p", { class: "hint" }, "No seat numbers: choose how many places, and any place of the section is yours at the door. Up to 10 ",
        seated ? "seats and places in all." : "places."),
      pickers.element,
    ] : null,
    h("div", { class: "basket", role: "region", "aria-label": "Your choice" },
      holdLine,
      h("div", { class: "basket-line" }, summary, h("div", { class: "basket-actions" },
        // Not logged in: the way to choose, rather than a Hold button that cannot.
        user ? [holdButton, cancelButton] : [
          h("a", { href: `#/signup${next}`, class: "button secondary" }, "Sign up"),
          h("a", { href: `#/login${next}`, class: "button primary" }, `Log in to hold ${what}`),
        ]))));
  map.element.setAttribute("aria-describedby", helpId);

  function updateSummary() {
    const seats = map.chosenSeats();
    const places = pickers.chosen();
    const count = seats.length + pickers.count();
    map.max = MAX_SEATS - pickers.count();
    const total = seats.reduce((sum, s) => sum + s.price_cents, 0)
      + places.reduce((sum, p) => sum + p.quantity * p.section.price_cents, 0);
    const parts = [];
    if (seats.length > 0) parts.push(`${plural(seats.length, "seat")} chosen: ${seats.map(seatName).join("; ")}.`);
    if (places.length > 0) parts.push(`${places.map((p) => placesText(p.quantity, p.section.name)).join("; ")}.`);
    summary.textContent = count === 0 ? `No ${what} chosen.` : `${parts.join(" ")} Total ${formatMoney(total, event.currency)}.`;
    holdButton.textContent = count === 0 ? `Hold ${what}`
      : `Hold ${places.length === 0 ? plural(seats.length, "seat") : plural(count, "ticket")} · ${formatMoney(total, event.currency)}`;
    holdButton.disabled = count === 0 || holding;
  }
  updateSummary();

  // The places left of each section of general admission, read again every
  // RECOUNT_MS from the event's snapshot while the page is open.
  if (general.length > 0) {
    const recount = setInterval(async () => {
      try {
        /** @type {import("../types.js").Event} */
        const fresh = await get(`/v1/events/${encodeURIComponent(id)}`, { signal });
        pickers.setAvailable((fresh.sections ?? []).map((s) => ({ id: s.id, available: s.available })));
      } catch {
        // the next count will do; the hold says what is left if it comes to that
      }
    }, RECOUNT_MS);
    signal.addEventListener("abort", () => clearInterval(recount));
  }

  // Live statuses: started when the seats are first shown.
  let watching = false;
  function showSeats() {
    seatSection.hidden = false;
    if (watching || !seated) return; // an event of places alone has no seat map to watch
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
    const places = pickers.chosen();
    if ((seats.length === 0 && places.length === 0) || !user) return;
    clearNotice();
    holding = true;
    const current = (attempt = new AbortController());
    signal.addEventListener("abort", () => current.abort(signal.reason), { once: true });
    cancelButton.hidden = false;
    updateSummary();
    summary.textContent = `Holding ${heldWords(seats.length, pickers.count())}…`;
    /** @type {import("../types.js").HoldRequest} */
    const body = { event_id: id };
    if (seats.length > 0) body.seat_ids = seats.map((s) => s.id);
    if (places.length > 0) body.general = places.map((p) => ({ section_id: p.section.id, quantity: p.quantity }));
    try {
      // The hold the buyer asked for is retried by itself after a 429 or 503
      // (retrying shows which limit refused, and counts down).
      /** @type {import("../api.js").Answer<import("../types.js").Hold>} */
      const { data: hold } = await retrying(() => api("POST", "/v1/holds", { body, signal: current.signal }), current.signal);
      rememberHold(user, hold);
      map.clearChoice();
      pickers.clear();
      go(`/holds/${hold.id}`);
      return;
    } catch (err) {
      if (isAbort(err)) {
        if (!signal.aborted) showMessage(`Holding was cancelled: your ${what} are still chosen.`);
      } else if (err instanceof ApiError && err.slug === "seats-unavailable") {
        const taken = err.problem.unavailable_seat_ids || [];
        lost(map.applyChanges(taken.map((seatId) => ({ id: seatId, status: "held" }))));
        report(err, "Those seats were just taken: choose others.");
      } else if (err instanceof ApiError && err.slug === "sold-out") {
        // The places left, as the hold found them: quantities above come down.
        const short = err.problem.sold_out_sections || [];
        pickers.setAvailable(short.map((s) => ({ id: s.section_id, available: s.available })));
        report(err, short.every((s) => s.available === 0) ? "Choose another section, or come back later: places given back go on sale again."
          : "Fewer places are left than you chose: the quantity now shows what is left. Hold again if it suits you.");
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
      onLapsed: () => { admitted = false; seatSection.hidden = true; map.clearChoice(); pickers.clear(); updateSummary(); },
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
 * The page's shape while the event is read: a line for the venue, a few for
 * the description, and a box where the seats will be (layout shift: none).
 * @returns {HTMLElement}
 */
function eventSkeleton() {
  return h("div", { class: "skeleton", "aria-hidden": "true" },
    h("p", { class: "skeleton-line lead" }),
    h("p", { class: "skeleton-line" }), h("p", { class: "skeleton-line short" }),
    h("p", { class: "skeleton-heading" }),
    h("div", { class: "skeleton-box" }));
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
