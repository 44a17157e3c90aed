// The words and arithmetic of places of general admission (places.js).
import { test } from "node:test";
import assert from "node:assert/strict";

import { heldWords, leftWords, placeName, placesText, stepQuantity } from "../static/js/places.js";

test("a place is named by its section, without row or seat", () => {
  assert.equal(placeName("Floor"), "General admission · Floor");
  assert.equal(placesText(3, "Floor"), "3 × General admission · Floor");
});

test("a step stays within what is left and what the hold has room for", () => {
  assert.equal(stepQuantity(0, +1, 5, 10), 1);
  assert.equal(stepQuantity(2, -1, 5, 10), 1);
  assert.equal(stepQuantity(0, -1, 5, 10), 0, "never below 0");
  assert.equal(stepQuantity(5, +1, 5, 10), 5, "never above what is left");
  assert.equal(stepQuantity(3, +1, 50, 0), 3, "never past the hold's room");
  assert.equal(stepQuantity(3, +1, 50, 1), 4);
  assert.equal(stepQuantity(4, -1, 2, 0), 2, "a quantity above what is left comes down to it");
  assert.equal(stepQuantity(0, +1, 0, 10), 0, "nothing from a sold-out section");
});

test("a hold of seats and places in words", () => {
  assert.equal(heldWords(2, 0), "2 seats");
  assert.equal(heldWords(0, 1), "1 place of general admission");
  assert.equal(heldWords(1, 3), "1 seat and 3 places of general admission");
  assert.equal(leftWords(120), "120 left");
  assert.equal(leftWords(0), "Sold out");
});
