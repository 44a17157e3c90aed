// The buyer's tickets, by order (GET /v1/orders), then those friends gave
// them (GET /v1/tickets: tickets of others' orders), each with its QR code
// (GET /v1/tickets/{id}/qr, a PNG the door scans) and the code in text. While
// the event allows it, a ticket of an order can be refunded (refund.js),
// after a confirmation that says how much goes back; a valid ticket can be
// given to a friend (transfer.js). print.css prints one ticket to a block,
// without the navigation, the buttons or the tickets that admit no one.
// Every QR image loads at once; one that fails (no connection, a busy
// server) is asked for again, waiting a little longer each time.

import { get, readEvent, readSeatMap, retrying } from "../api.js";
import { backoffMs } from "../retry.js";
import { h, replace } from "../dom.js";
import { formatDateTime, formatMoney } from "../format.js";
import { report } from "../notice.js";
import { refundAmount, refundableTickets, refundsOpen } from "../refunds.js";
import { requireUser, setTitle } from "../router.js";
import { placeName } from "../places.js";
import { showReference } from "../reference.js";
import { seatName } from "../seatmap.js";
import { confirmRefund } from "./refund.js";
import { transferButton } from "./transfer.js";
import { calendarFile, calendarFileName, newestFirst, ticketLook } from "../wallet.js";

/**
 * @typedef {import("../types.js").Ticket} Ticket
 * @typedef {import("../types.js").Order} Order
 * @typedef {{event: import("../types.js").Event, seats: Map<string, import("../types.js").Seat>, position: Map<string, number>}} EventSeats
 */

/** @type {import("../router.js").Page} */
export async function ticketsPage({ main, signal }) {
  setTitle(main, "My tickets");
  if (!requireUser(main, "buyer")) return;
  const list = h("div", { class: "orders" });
  main.append(list);
  await drawOrders(list, signal);
}

/**
 * Draws the buyer's orders that have tickets into list, newest first.
 * @param {HTMLElement} list
 * @param {AbortSignal} signal
 */
async function drawOrders(list, signal) {
  const [{ orders }, { tickets }] = await Promise.all([
    /** @type {Promise<{orders: Order[]}>} */ (retrying(() => get("/v1/orders", { signal }), signal)),
    /** @type {Promise<{tickets: Ticket[]}>} */ (retrying(() => get("/v1/tickets", { signal }), signal)),
  ]);
  const withTickets = newestFirst(orders.filter((o) => o.tickets.length > 0));
  // The tickets of others' orders: friends gave them.
  const mine = new Set(withTickets.flatMap((o) => o.tickets.map((t) => t.id)));
  const given = tickets.filter((t) => !mine.has(t.id));
  if (withTickets.length === 0 && given.length === 0) {
    replace(list, h("p", {}, "You have no tickets yet. ", h("a", { href: "#/events" }, "Find an event.")));
    return;
  }
  // Each order and ticket names its event and seats by id: read each event
  // and its seat map once to name them.
  const eventIds = [...new Set([...withTickets.map((o) => o.event_id), ...given.map((t) => t.event_id)])];
  const events = new Map(await Promise.all(eventIds.map(async (id) => {
    const [event, map] = await Promise.all([readEvent(id, signal), readSeatMap(id, signal)]);
    /** @type {[string, EventSeats]} */
    const entry = [id, { event, seats: new Map(map.seats.map((s) => [s.id, s])), position: new Map(map.seats.map((s, i) => [s.id, i])) }];
    return entry;
  })));

  const printButton = h("button", { type: "button", class: "secondary no-print" }, "Print tickets");
  printButton.addEventListener("click", () => window.print());
  const redraw = () => drawOrders(list, signal).catch(report);
  const seatsOf = (/** @type {string} */ eventId) => /** @type {EventSeats} */ (events.get(eventId));
  replace(list, printButton, withTickets.map((o) => orderSection(o, seatsOf(o.event_id), redraw, signal)),
    given.length === 0 ? null : h("section", { class: "order", "aria-labelledby": "given-heading" },
      h("h2", { id: "given-heading" }, "Given to you by friends"),
      h("ul", { class: "tickets", "aria-label": "Tickets given to you" }, given.map((t) => {
        const { event, seats } = seatsOf(t.event_id);
        return ticketCard(t, event, whereOf(t, seats), null, signal);
      }))));
}

/**
 * One order: its event, what was paid and given back, its tickets, and what
 * of it may be refunded.
 * @param {Order} order
 * @param {EventSeats} eventSeats
 * @param {() => void} redraw draws the orders again, after a refund
 * @param {AbortSignal} signal
 * @returns {HTMLElement}
 */
function orderSection(order, eventSeats, redraw, signal) {
  const { event, seats, position } = eventSeats;
  // In the seat map's order: the first row's first seat first.
  const tickets = [...order.tickets].sort((a, b) => (position.get(a.seat_id) ?? 0) - (position.get(b.seat_id) ?? 0));
  const headingId = `order-${order.id}`;
  const open = refundsOpen(event, Date.now());
  const refundable = open ? refundableTickets(order) : [];
  // A place of general admission is not on the seat map: its section's price.
  const sectionPrice = new Map((event.sections ?? []).map((s) => [s.name, s.price_cents]));
  const priceOf = (/** @type {Ticket} */ t) => seats.get(t.seat_id)?.price_cents ?? sectionPrice.get(t.section) ?? 0;
  const where = (/** @type {Ticket} */ t) => whereOf(t, seats);
  /** @param {Ticket[]} tickets */
  const amount = (tickets) => formatMoney(refundAmount(order, tickets, priceOf), order.currency);
  /** @param {Ticket[]} tickets */
  const refund = (tickets) => confirmRefund({ order, event, tickets, amount: refundAmount(order, tickets, priceOf), where, redraw, signal });

  const paid = [`Ordered ${formatDateTime(order.created_at)}`, formatMoney(order.total_cents, order.currency)];
  if (order.refunded_cents > 0) paid.push(`${formatMoney(order.refunded_cents, order.currency)} refunded`);
  return h("section", { class: "order", "aria-labelledby": headingId },
    h("h2", { id: headingId }, event.name),
    h("p", {}, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))),
    h("p", { class: "muted" }, paid.join(" · ")),
    event.status === "cancelled" || tickets.every((t) => !ticketLook(t.status).live) ? null
      : calendarButton(event, tickets.filter((t) => ticketLook(t.status).live).map(where)),
    refundNote(order, event, open),
    refundable.length > 1
      ? refundButton(`Refund all ${refundable.length} tickets · ${amount(refundable)}`, "secondary no-print", () => refund(refundable))
      : null,
    h("ul", { class: "tickets", "aria-label": `Tickets for ${event.name}` },
      tickets.map((t) => ticketCard(t, event, where(t),
        refundable.includes(t) ? { text: `Refund this ticket · ${amount([t])}`, ask: () => refund([t]) } : null, signal))));
}

/**
 * A ticket's seat or place in words.
 * @param {Ticket} ticket
 * @param {Map<string, import("../types.js").Seat>} seats the seat map's seats
 * @returns {string}
 */
function whereOf(ticket, seats) {
  const seat = seats.get(ticket.seat_id);
  return ticket.general_admission ? placeName(ticket.section) : seat ? seatName(seat) : ticket.section;
}

/**
 * What the order's buyer may do about refunds, in words: nothing when there
 * is nothing left to refund.
 * @param {Order} order
 * @param {import("../types.js").Event} event
 * @param {boolean} open
 * @returns {HTMLParagraphElement | null}
 */
function refundNote(order, event, open) {
  if (event.status === "cancelled") {
    return h("p", { class: "order-note" }, "This event was cancelled. Your money is being returned to the card you paid with.");
  }
  if (refundableTickets(order).length === 0) return null;
  if (open && event.refunds_until) {
    return h("p", { class: "order-note no-print" }, "You can refund tickets until ", h("time", { datetime: event.refunds_until }, formatDateTime(event.refunds_until)), ".");
  }
  if (event.refunds_until) {
    return h("p", { class: "order-note no-print" }, `Refunds for this event closed on ${formatDateTime(event.refunds_until)}. The organizer may still help.`);
  }
  return h("p", { class: "order-note no-print" }, "This event does not offer refunds.");
}

/**
 * A ticket's status in words; "valid" is the rest.
 * @type {Partial<Record<Ticket["status"], string>>}
 */
const TICKET_STATUS = {
  scanned: "Used: scanned at the door",
  refund_pending: "Refund on its way: this ticket no longer admits anyone",
  refunded: "Refunded: this ticket no longer admits anyone",
  transferred: "Given away: it belongs to someone else now, and no longer admits you",
};

/**
 * @param {Ticket} ticket
 * @param {import("../types.js").Event} event
 * @param {string} where its seat in words
 * @param {{text: string, ask: () => void} | null} refund its refund button's text and what it does; null when it may not be refunded
 * @param {AbortSignal} signal
 * @returns {HTMLLIElement}
 */
function ticketCard(ticket, event, where, refund, signal) {
  const headingId = `ticket-${ticket.id}`;
  // A ticket refunded, being refunded or given away admits no one: no code,
  // and not printed.
  // A used one (scanned) looks used, stamped, and is not printed either.
  const admits = ticket.status === "valid" || ticket.status === "scanned";
  const look = ticketLook(ticket.status);
  return h("li", { class: look.live ? look.className : `${look.className} no-print`, "aria-labelledby": headingId },
    look.stamp ? h("p", { class: "ticket-stamp", "aria-hidden": "true" }, look.stamp) : null,
    h("div", { class: "ticket-text" },
      h("h3", { id: headingId }, event.name),
      h("p", { class: "ticket-when" }, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))),
      h("p", { class: "ticket-seat" }, where),
      h("p", { class: "ticket-status" }, TICKET_STATUS[ticket.status] || "Valid"),
      admits ? h("p", {}, "Code: ", h("code", { class: "ticket-code" }, ticket.code)) : null,
      ticket.status === "valid" ? h("div", { class: "actions no-print" },
        transferButton(ticket, `${where}, ${event.name}`),
        refund ? refundButton(refund.text, "link-button", refund.ask, `${refund.text}: ${where}`) : null) : null),
    admits ? h("div", { class: "ticket-qr" }, qrImage(ticket, where, signal),
      // Under the QR: what the door types when the code cannot be scanned.
      h("p", { class: "ticket-reference" }, "Reference ", h("strong", {}, showReference(ticket.reference)))) : null);
}

/**
 * "Add to calendar": the event as an .ics file (wallet.js), made here and
 * downloaded, nothing asked of the server.
 * @param {import("../types.js").Event} event
 * @param {string[]} seats the buyer's seats in words
 * @returns {HTMLButtonElement}
 */
function calendarButton(event, seats) {
  const button = h("button", { type: "button", class: "secondary no-print calendar-button", "aria-label": `Add to calendar: ${event.name}` },
    "Add to calendar");
  button.addEventListener("click", () => {
    const url = new URL(`#/events/${event.id}`, location.href).href;
    const file = new Blob([calendarFile(event, { url, seats })], { type: "text/calendar;charset=utf-8" });
    const link = h("a", { href: URL.createObjectURL(file), download: calendarFileName(event.name), hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  });
  return button;
}

/**
 * @param {string} text
 * @param {string} className
 * @param {() => void} onClick
 * @param {string} [label] its accessible name, when the text alone is not enough
 * @returns {HTMLButtonElement}
 */
function refundButton(text, className, onClick, label) {
  const button = h("button", { type: "button", class: className, "aria-label": label || null }, text);
  button.addEventListener("click", onClick);
  return button;
}

// How many times a QR image is asked for before the card says it did not load.
const qrAttempts = 6;

// qrImage is the ticket's QR code. When it fails to load, it is asked for
// again after 1, 2, 4 … s (the server's Retry-After is not visible to an
// image); after qrAttempts the card says so: the code in text works too.
/**
 * @param {Ticket} ticket
 * @param {string} where its seat in words
 * @param {AbortSignal} signal
 * @returns {HTMLImageElement}
 */
function qrImage(ticket, where, signal) {
  const src = `/v1/tickets/${ticket.id}/qr`;
  const img = h("img", {
    class: "qr", src, width: 220, height: 220,
    alt: `QR code of ticket ${ticket.code} (${where})`,
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
