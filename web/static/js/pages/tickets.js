// The buyer's tickets (GET /v1/tickets), each with its QR code
// (GET /v1/tickets/{id}/qr, a PNG the door scans) and the code in text.
// print.css prints one ticket to a block, without the navigation (and without
// the tickets that admit no one). Every QR image loads at once; one that
// fails (no connection, a busy server) is asked for again, waiting a little
// longer each time. A valid ticket can be given to a friend (transfer.js).

import { get, readEvent, readSeatMap, retrying } from "../api.js";
import { backoffMs } from "../retry.js";
import { h } from "../dom.js";
import { formatDateTime } from "../format.js";
import { requireUser, setTitle } from "../router.js";
import { placeName } from "../places.js";
import { seatName } from "../seatmap.js";
import { transferButton } from "./transfer.js";

/**
 * @typedef {import("../types.js").Ticket} Ticket
 * @typedef {{event: import("../types.js").Event, seats: Map<string, import("../types.js").Seat>}} EventSeats
 */

/** @type {import("../router.js").Page} */
export async function ticketsPage({ main, signal }) {
  setTitle(main, "My tickets");
  if (!requireUser(main, "buyer")) return;
  /** @type {{tickets: Ticket[]}} */
  const { tickets } = await retrying(() => get("/v1/tickets", { signal }), signal);
  if (tickets.length === 0) {
    main.append(h("p", {}, "You have no tickets yet. ", h("a", { href: "#/events" }, "Find an event.")));
    return;
  }

  // Each ticket names its event and seat by id: read each event and its seat
  // map once to name them.
  const eventIds = [...new Set(tickets.map((t) => t.event_id))];
  const events = new Map(await Promise.all(eventIds.map(async (id) => {
    const [event, map] = await Promise.all([readEvent(id, signal), readSeatMap(id, signal)]);
    /** @type {[string, EventSeats]} */
    const entry = [id, { event, seats: new Map(map.seats.map((s) => [s.id, s])) }];
    return entry;
  })));

  const printButton = h("button", { type: "button", class: "secondary no-print" }, "Print tickets");
  printButton.addEventListener("click", () => window.print());
  main.append(printButton, h("ul", { class: "tickets", "aria-label": "Tickets" },
    tickets.map((t) => ticketCard(t, /** @type {EventSeats} */ (events.get(t.event_id)), signal))));
}

/**
 * A ticket's status in words; "valid" is the rest.
 * @type {Partial<Record<Ticket["status"], string>>}
 */
const TICKET_STATUS = {
  scanned: "Used: scanned at the door",
  refunded: "Refunded: this ticket no longer admits anyone",
  transferred: "Given away: it belongs to someone else now, and no longer admits you",
};

/**
 * @param {Ticket} ticket
 * @param {EventSeats} eventSeats its event and seats (every ticket's event was read)
 * @param {AbortSignal} signal
 * @returns {HTMLLIElement}
 */
function ticketCard(ticket, { event, seats }, signal) {
  const seat = seats.get(ticket.seat_id);
  const where = ticket.general_admission ? placeName(ticket.section) : seat ? seatName(seat) : ticket.section;
  const headingId = `ticket-${ticket.id}`;
  // A ticket refunded or given away admits no one: no code, and not printed.
  const admits = ticket.status === "valid" || ticket.status === "scanned";
  const code = admits ? ticket.code : undefined;
  return h("li", { class: admits ? "ticket" : "ticket ticket-void no-print", "aria-labelledby": headingId },
    h("div", { class: "ticket-text" },
      h("h2", { id: headingId }, event.name),
      h("p", {}, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))),
      h("p", { class: "ticket-seat" }, where),
      h("p", { class: "ticket-status" }, TICKET_STATUS[ticket.status] || "Valid"),
      code ? h("p", {}, "Code: ", h("code", { class: "ticket-code" }, code)) : null,
      ticket.status === "valid" ? transferButton(ticket, `${where}, ${event.name}`) : null),
    code ? qrImage(code, ticket.id, where, signal) : null);
}

// How many times a QR image is asked for before the card says it did not load.
const qrAttempts = 6;

// qrImage is the ticket's QR code. When it fails to load, it is asked for
// again after 1, 2, 4 … s (the server's Retry-After is not visible to an
// image); after qrAttempts the card says so: the code in text works too.
/**
 * @param {string} code the ticket's
 * @param {string} id the ticket's
 * @param {string} where its seat in words
 * @param {AbortSignal} signal
 * @returns {HTMLImageElement}
 */
function qrImage(code, id, where, signal) {
  const src = `/v1/tickets/${id}/qr`;
  const img = h("img", {
    class: "qr", src, width: 220, height: 220,
    alt: `QR code of ticket ${code} (${where})`,
  });
  let attempt = 1;
  img.addEventListener("error", () => {
    if (signal.aborted) return;
    if (attempt >= qrAttempts) {
      img.replaceWith(h("p", { class: "qr qr-missing", role: "status" },
        "The QR code did not load. Reload the page to try again; at the door, the code on this ticket works too."));
      return;
    }
    const wait = backoffMs(attempt);
    attempt += 1;
    const retry = setTimeout(() => {
      img.removeAttribute("src");
      img.src = src;
    }, wait);
    signal.addEventListener("abort", () => clearTimeout(retry), { once: true });
  });
  return img;
}

