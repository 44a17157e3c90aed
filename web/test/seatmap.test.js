// The seat map's pure parts (seatmap.js): seats grouped by section and row,
// and a seat's name.
import { test } from "node:test";
import assert from "node:assert/strict";

import { groupSeats, seatName } from "../static/js/seatmap.js";

const seat = (section, row, number) => ({ id: `${section}-${row}${number}`, section, row, number, price_cents: 100, status: "available" });

test("sections keep the API's order; rows go A … Z, AA; seats by number", () => {
  const seats = [seat("Stalls", "AA", 1), seat("Balcony", "A", 2), seat("Stalls", "B", 10), seat("Stalls", "B", 2), seat("Stalls", "Z", 1), seat("Balcony", "A", 1)];
  const grouped = groupSeats(seats).map(([section, rows]) => [section, rows.map(([row, list]) => [row, list.map((s) => s.number)])]);
  assert.deepEqual(grouped, [
    ["Stalls", [["B", [2, 10]], ["Z", [1]], ["AA", [1]]]],
    ["Balcony", [["A", [1, 2]]]],
  ]);
});

test("a seat's name", () => {
  assert.equal(seatName(seat("Stalls", "A", 1)), "Stalls, row A, seat 1");
});
