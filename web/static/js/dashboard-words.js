// The organizer's dashboard in words: each figure of an event's sales (GET
// /v1/organizer/events/{id}/sales) as its tile shows it, a value and a note.
// Pure, so that Node tests it.

import { formatMoney } from "./format.js";

/**
 * A tile's words: its big value and the note under it ("" for none).
 * @typedef {{value: string, note: string}} Figure
 */

/**
 * The tiles of the dashboard, by key (the tiles' data-figure).
 * @param {import("./types.js").EventSales} s
 * @param {boolean} cancelled the event is cancelled: nothing more is sold
 * @returns {Record<"revenue" | "sold" | "orders" | "check-ins" | "held", Figure>}
 */
export function salesFigures(s, cancelled) {
  const money = (/** @type {number} */ c) => formatMoney(c, s.currency);
  const o = s.orders;
  const notes = [];
  if (o.partially_refunded > 0) notes.push(`${o.partially_refunded} partly refunded`);
  if (o.refunded > 0) notes.push(`${o.refunded} refunded`);
  if (o.pending > 0) notes.push(`${o.pending} being paid`);
  const { scanned, admitting } = s.check_ins;
  return {
    revenue: {
      value: money(s.revenue_cents),
      note: s.refunded_cents > 0 ? `${money(s.gross_cents)} taken, ${money(s.refunded_cents)} refunded` : "",
    },
    sold: {
      value: `${s.tickets_sold} of ${s.capacity}`,
      note: cancelled ? "Cancelled: nothing more is sold" : `${Math.max(s.capacity - s.tickets_sold - s.tickets_held, 0)} still available`,
    },
    orders: { value: String(o.confirmed + o.partially_refunded), note: notes.join(" · ") },
    "check-ins": {
      value: `${scanned} of ${admitting}`,
      note: admitting > 0 ? `${Math.floor((100 * scanned) / admitting)}% of tickets scanned` : "No tickets yet",
    },
    held: { value: String(s.tickets_held), note: "in buyers' baskets" },
  };
}
