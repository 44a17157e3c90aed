// The organizer's dashboard in words (dashboard-words.js).
import { test } from "node:test";
import assert from "node:assert/strict";

import { salesFigures } from "../static/js/dashboard-words.js";

/** @returns {import("../static/js/types.js").EventSales} */
function sales(over = {}) {
  return {
    currency: "USD", capacity: 124, tickets_sold: 3, tickets_held: 1,
    revenue_cents: 13500, gross_cents: 13500, refunded_cents: 0,
    orders: { pending: 0, confirmed: 2, partially_refunded: 0, refunded: 0 },
    check_ins: { scanned: 1, admitting: 3 },
    sections: [],
    ...over,
  };
}

test("a sale's figures: revenue, sold of capacity, paid orders, check-ins, held", () => {
  const f = salesFigures(sales(), false);
  assert.deepEqual(f.revenue, { value: "$135.00", note: "" });
  assert.deepEqual(f.sold, { value: "3 of 124", note: "120 still available" });
  assert.deepEqual(f.orders, { value: "2", note: "" });
  assert.deepEqual(f["check-ins"], { value: "1 of 3", note: "33% of tickets scanned" });
  assert.deepEqual(f.held, { value: "1", note: "in buyers' baskets" });
});

test("refunds: the money kept, what was taken and given back, the orders by what befell them", () => {
  const f = salesFigures(sales({
    revenue_cents: 7500, gross_cents: 13500, refunded_cents: 6000,
    orders: { pending: 1, confirmed: 1, partially_refunded: 1, refunded: 1 },
  }), false);
  assert.deepEqual(f.revenue, { value: "$75.00", note: "$135.00 taken, $60.00 refunded" });
  assert.deepEqual(f.orders, { value: "2", note: "1 partly refunded · 1 refunded · 1 being paid" });
});

test("nothing sold yet, and a cancelled event", () => {
  const none = salesFigures(sales({ tickets_sold: 0, tickets_held: 0, revenue_cents: 0, gross_cents: 0,
    orders: { pending: 0, confirmed: 0, partially_refunded: 0, refunded: 0 }, check_ins: { scanned: 0, admitting: 0 } }), false);
  assert.deepEqual(none["check-ins"], { value: "0 of 0", note: "No tickets yet" });
  assert.equal(none.sold.note, "124 still available");
  assert.equal(salesFigures(sales(), true).sold.note, "Cancelled: nothing more is sold");
});
