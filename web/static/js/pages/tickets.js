// The buyer's tickets, by order (GET /v1/orders), each with its QR code
// (GET /v1/tickets/{id}/qr, a PNG the door scans) and the code in text, and a
// Refund action while the event allows it (POST /v1/orders/{id}/refund),
// after a confirmation that says how much goes back. print.css prints one
// ticket to a block, without the navigation or the buttons. Every QR image
// loads at once; one that fails (no connection, a busy server) is asked for
// again, waiting a little longer each time.

import { api, get, readEvent, readSeatMap, retrying } from "../api.js";
import { backoffMs } from "../retry.js";
import { h, replace } from "../dom.js";
import { formatDateTime, formatMoney, plural } from "../format.js";
import { report, showMessage } from "../notice.js";
import { refundAmount, refundableTickets, refundsOpen } from "../refunds.js";
import { requireUser, setTitle } from "../router.js";
import { seatName } from "../seatmap.js";

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
  /** @type {{orders: Order[]}} */
  const { orders } = await retrying(() => get("/v1/orders", { signal }), signal);
  const withTickets = orders.filter((o) => o.tickets.length > 0);
  if (withTickets.length === 0) {
    replace(list, h("p", {}, "You have no tickets yet. ", h("a", { href: "#/events" }, "Find an event.")));
    return;
  }
  // Each order names its event and seats by id: read each event and its seat
  // map once to name them.
  const eventIds = [...new Set(withTickets.map((o) => o.event_id))];
  const events = new Map(await Promise.all(eventIds.map(async (id) => {
    const [event, map] = await Promise.all([readEvent(id, signal), readSeatMap(id, signal)]);
    /** @type {[string, EventSeats]} */
    const entry = [id, { event, seats: new Map(map.seats.map((s) => [s.id, s])), position: new Map(map.seats.map((s, i) => [s.id, i])) }];
    return entry;
  })));

  const printButton = h("button", { type: "button", class: "secondary no-print" }, "Print tickets");
  printButton.addEventListener("click", () => window.print());
  const redraw = () => drawOrders(list, signal).catch(report);
  replace(list, printButton, withTickets.map((o) =>
    orderSection(o, /** @type {EventSeats} */ (events.get(o.event_id)), redraw, signal)));
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
  const priceOf = (/** @type {string} */ seatId) => seats.get(seatId)?.price_cents ?? 0;
  const where = (/** @type {Ticket} */ t) => { const s = seats.get(t.seat_id); return s ? seatName(s) : "Seat"; };
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
    refundNote(order, event, open),
    refundable.length > 1
      ? refundButton(`Refund all ${refundable.length} tickets · ${amount(refundable)}`, "secondary no-print", () => refund(refundable))
      : null,
    h("ul", { class: "tickets", "aria-label": `Tickets for ${event.name}` },
      tickets.map((t) => ticketCard(t, event, where(t),
        refundable.includes(t) ? { text: `Refund this ticket · ${amount([t])}`, ask: () => refund([t]) } : null, signal))));
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
  const admits = ticket.status === "valid" || ticket.status === "scanned";
  return h("li", { class: "ticket", "aria-labelledby": headingId },
    h("div", { class: "ticket-text" },
      h("h3", { id: headingId }, event.name),
      h("p", { class: "ticket-seat" }, where),
      h("p", { class: "ticket-status" }, TICKET_STATUS[ticket.status] || "Valid"),
      admits ? h("p", {}, "Code: ", h("code", { class: "ticket-code" }, ticket.code)) : null,
      refund ? refundButton(refund.text, "link-button no-print", refund.ask, `${refund.text}: ${where}`) : null),
    admits ? qrImage(ticket, where, signal) : null);
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

/**
 * What a refund's confirmation needs.
 * @typedef {object} RefundAsked
 * @property {Order} order
 * @property {import("../types.js").Event} event
 * @property {Ticket[]} tickets
 * @property {number} amount cents
 * @property {(t: Ticket) => string} where a ticket's seat in words
 * @property {() => void} redraw
 * @property {AbortSignal} signal
 */

/**
 * Asks the buyer to confirm the refund, in a modal dialog that says how much
 * goes back and which tickets stop admitting; on confirmation sends it, with
 * an Idempotency-Key of its own (kept for a second press after a failure),
 * and says what became of it.
 * @param {RefundAsked} asked
 */
function confirmRefund({ order, event, tickets, amount, where, redraw, signal }) {
  const money = formatMoney(amount, order.currency);
  const titleId = "refund-title";
  const confirm = h("button", { type: "button", class: "primary" }, amount > 0 ? `Refund ${money}` : "Refund");
  const keep = h("button", { type: "button", class: "secondary" }, "Keep my tickets");
  const dialog = h("dialog", { class: "confirm", "aria-labelledby": titleId },
    h("h2", { id: titleId }, `Refund ${plural(tickets.length, "ticket")}?`),
    h("p", {}, amount > 0
      ? `${money} will go back to the card you paid with for ${event.name}.`
      : `Nothing is left to pay back for ${event.name}.`),
    h("p", {}, tickets.length === 1 ? "This ticket will no longer admit anyone:" : "These tickets will no longer admit anyone:"),
    h("ul", {}, tickets.map((t) => h("li", {}, where(t)))),
    h("p", {}, "This cannot be undone."),
    h("div", { class: "actions" }, keep, confirm));
  document.body.append(dialog);
  const close = () => { dialog.close(); dialog.remove(); };
  keep.addEventListener("click", close);
  dialog.addEventListener("cancel", () => dialog.remove());
  const key = crypto.randomUUID();
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    try {
      const { status } = await api("POST", `/v1/orders/${order.id}/refund`, {
        body: { ticket_ids: tickets.map((t) => t.id) }, headers: { "Idempotency-Key": key }, signal,
      });
      close();
      showMessage(status === 202
        ? `Your refund of ${money} is on its way: the payment provider has not confirmed it yet. ${tickets.length === 1 ? "The ticket no longer admits" : "The tickets no longer admit"} anyone.`
        : `Refunded: ${money} will be back on your card in a few days.`);
      redraw();
    } catch (err) {
      close();
      report(refundProblem(err));
    } finally {
      confirm.disabled = false;
    }
  });
  dialog.showModal();
  keep.focus();
}

/**
 * A refund's refusal in the buyer's words (the server's detail names tickets
 * by id).
 * @param {unknown} err
 * @returns {unknown}
 */
function refundProblem(err) {
  /** @type {Record<string, string>} */
  const words = {
    "refund-window-closed": "Refunds for this event have closed. The organizer may still help.",
    "ticket-not-refundable": "A ticket you chose can no longer be refunded: it was used at the door, given away, or refunded already. Nothing was refunded.",
    "refund-refused": "The payment provider refused the refund, so nothing was refunded. Your tickets still admit you.",
    "event-cancelled": "This event was cancelled: your money is being returned.",
  };
  const slug = /** @type {{slug?: string}} */ (err).slug || "";
  const problem = /** @type {{problem?: import("../types.js").Problem}} */ (err).problem;
  if (!problem || !words[slug]) return err;
  return { problem: { title: problem.title, detail: words[slug] } };
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
