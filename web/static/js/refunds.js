// What a buyer may refund of an order, and for how much: pure functions of
// the order, its event and its seats' prices, so that Node's tests can run
// them (web/test/refunds.test.js). The server decides again; these only say
// what to offer.

/**
 * @typedef {import("./types.js").Order} Order
 * @typedef {import("./types.js").Ticket} Ticket
 * @typedef {import("./types.js").Event} Event
 */

/**
 * Whether the event's buyers may ask for refunds at now: before its
 * refunds_until, or any time once it is cancelled.
 * @param {Event} event
 * @param {number} now ms since the epoch
 * @returns {boolean}
 */
export function refundsOpen(event, now) {
  if (event.status === "cancelled") return true;
  return event.refunds_until !== null && Date.parse(event.refunds_until) > now;
}

/**
 * The order's tickets its buyer may refund: valid ones of a paid order.
 * @param {Order} order
 * @returns {Ticket[]}
 */
export function refundableTickets(order) {
  if (order.status !== "confirmed" && order.status !== "partially_refunded") return [];
  return order.tickets.filter((t) => t.status === "valid");
}

/**
 * What refunding the tickets gives back: what their seats cost, at most what
 * is left of the order (its total less what was refunded and what refunds on
 * their way will refund), as the server reckons it.
 * @param {Order} order
 * @param {Ticket[]} tickets
 * @param {(ticket: Ticket) => number} priceOf a ticket's seat's (or place's) price in cents
 * @returns {number} cents
 */
export function refundAmount(order, tickets, priceOf) {
  const price = tickets.reduce((sum, t) => sum + priceOf(t), 0);
  const pending = (order.refunds || []).filter((r) => r.status === "pending").reduce((sum, r) => sum + r.amount_cents, 0);
  return Math.max(0, Math.min(price, order.total_cents - order.refunded_cents - pending));
}
