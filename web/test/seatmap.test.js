// The seat map's pure parts (seatmap.js, seatmap-zoom.js): seats grouped by section and row,
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

// Zoom and pan (seatmap-zoom.js): the map fits the box at first sight, zooms
// between the fit and MAX_SCALE, and never pans off the box.
import { clampPan, clampScale, fitScale, GEOMETRY, mapSize, MAX_SCALE, zoomAt } from "../static/js/seatmap-zoom.js";

test("the fit scale fits the map's width, and never blows a small map up", () => {
  assert.equal(fitScale(1000, 350), 0.35);
  assert.equal(fitScale(400, 1000), 1);
  assert.equal(fitScale(0, 350), 1); // nothing to fit yet
  assert.equal(fitScale(1000, 0), 1);
});

test("zoom stays between the fit and the largest scale", () => {
  assert.equal(clampScale(0.1, 0.35), 0.35);
  assert.equal(clampScale(0.8, 0.35), 0.8);
  assert.equal(clampScale(9, 0.35), MAX_SCALE);
  assert.equal(clampScale(9, 2), 2, "a fit above the largest zoom wins");
  // Zoomed in all the way, a seat is at least a 44 px touch target.
  assert.ok(GEOMETRY.seat * MAX_SCALE >= 44 && GEOMETRY.seat >= 44);
});

test("a pan keeps the map over the box, or centres a smaller one", () => {
  assert.equal(clampPan(50, 1000, 350), 0);
  assert.equal(clampPan(-900, 1000, 350), -650);
  assert.equal(clampPan(-100, 1000, 350), -100);
  assert.equal(clampPan(-100, 300, 350), 25);
});

test("zooming around a point keeps that point where it is", () => {
  const view = { scale: 0.5, x: -20, y: -10 };
  const next = zoomAt(view, 1, 100, 60);
  // The map's point under (100, 60) before: ((100 + 20) / 0.5, (60 + 10) / 0.5) = (240, 140).
  assert.deepEqual(next, { scale: 1, x: 100 - 240, y: 60 - 140 });
});

test("the map's size from its sections' rows and seats", () => {
  const g = GEOMETRY;
  const pitch = g.seat + g.gap;
  const { width, height } = mapSize([{ rows: 3, seats: 8 }, { rows: 2, seats: 10 }]);
  assert.equal(width, 2 * g.pad + g.label + 10 * pitch);
  assert.equal(height, 3 * g.pad + g.stage + 2 * g.header + 5 * pitch + g.sectionGap);
});
