// What a buyer may refund, and for how much (refunds.js).
import { test } from "node:test";
import assert from "node:assert/strict";

import { refundAmount, refundableTickets, refundsOpen } from "../static/js/refunds.js";

/** @returns {import("../static/js/types.js").Event} */
function event(status = "scheduled", refundsUntil = "2030-01-01T12:00:00Z") {
  return {
    id: "e", name: "Night", venue: "Hall", description: "", status, starts_at: "2030-01-02T19:00:00Z",
    on_sale_at: "2029-01-01T00:00:00Z", refunds_until: refundsUntil, organizer_id: "o", currency: "USD",
    waiting_room: null, seats_total: 10, seats_available: 5, created_at: "2029-01-01T00:00:00Z",
  };
}

/** @returns {import("../static/js/types.js").Order} */
function order(status = "confirmed", refunded = 0, refunds = /** @type {import("../static/js/types.js").Refund[]} */ ([])) {
  const ticket = (/** @type {string} */ id, /** @type {"valid" | "scanned" | "refund_pending" | "refunded"} */ s) =>
    ({ id, event_id: "e", seat_id: `seat-${id}`, code: "C", status: s });
  return {
    id: "o", status, hold_id: "h", event_id: "e", total_cents: 9000, currency: "USD", created_at: "2029-06-01T00:00:00Z",
    refunded_cents: refunded, refunds,
    tickets: [ticket("a", "valid"), ticket("b", "scanned"), ticket("c", "refunded"), ticket("d", "valid")],
  };
}

test("refunds are open before refunds_until, never without one, always once cancelled", () => {
  const noon = Date.parse("2030-01-01T12:00:00Z");
  assert.equal(refundsOpen(event(), noon - 1), true);
  assert.equal(refundsOpen(event(), noon), false);
  assert.equal(refundsOpen(event("scheduled", null), 0), false);
  assert.equal(refundsOpen(event("cancelled", null), noon + 1), true);
});

test("only valid tickets of a paid order may be refunded", () => {
  assert.deepEqual(refundableTickets(order()).map((t) => t.id), ["a", "d"]);
  assert.deepEqual(refundableTickets(order("partially_refunded")).map((t) => t.id), ["a", "d"]);
  assert.deepEqual(refundableTickets(order("refunded")), []);
  assert.deepEqual(refundableTickets(order("pending")), []);
});

test("a refund gives back its seats' price, at most what is left of the order", () => {
  const o = order();
  const price = () => 3000;
  assert.equal(refundAmount(o, refundableTickets(o), price), 6000);
  assert.equal(refundAmount(order("partially_refunded", 5000), refundableTickets(o), price), 4000);
  const pending = order("confirmed", 0, [{ id: "r", status: "pending", reason: "buyer", amount_cents: 7000, ticket_ids: ["x"], created_at: "" }]);
  assert.equal(refundAmount(pending, refundableTickets(pending), price), 2000);
  assert.equal(refundAmount(order("partially_refunded", 9000), refundableTickets(o), price), 0);
});
