// The box office in words (boxoffice-words.js): a buyer's refused transfer,
// an organizer's tickets.
import { test } from "node:test";
import assert from "node:assert/strict";

import { isOwnEmail, organizerTicketWords, placeName, transferRefusalWords } from "../static/js/boxoffice-words.js";

test("every refusal of a transfer has its own words, without limits, ids or codes", () => {
  const cases = [
    [{ status: 404, slug: "recipient-not-found" }, /No Stagedoor buyer account uses this email/],
    [{ status: 409, slug: "ticket-not-transferable", ticketStatus: "scanned" }, /already used at the door/],
    [{ status: 409, slug: "ticket-not-transferable", ticketStatus: "transferred" }, /already given away/],
    [{ status: 409, slug: "ticket-not-transferable", ticketStatus: "revoked" }, /refunded or cancelled/],
    [{ status: 404, slug: "not-found" }, /no longer in your account/],
    [{ status: 400, slug: "invalid-request" }, /not your own/],
    [{ status: 429, slug: "rate-limited", retryAfterMs: 1_800_000 }, /try again in about 30 minutes\.$/],
    [{ status: 429, slug: "rate-limited", retryAfterMs: null }, /try again later\.$/],
    [{ status: 429, slug: "too-many-concurrent-requests" }, /busy with your other requests/],
    [{ status: 503, slug: "service-unavailable" }, /cannot tell whether the ticket moved/],
    [{ status: 0, slug: "" }, /cannot tell whether the ticket moved/],
    [{ status: 418, slug: "teapot" }, /could not be given away/],
  ];
  const seen = new Set();
  for (const [refusal, want] of cases) {
    const words = transferRefusalWords(refusal);
    assert.match(words, want, JSON.stringify(refusal));
    assert.doesNotMatch(words, /transfer-buyer|rate-limited|recipient-not-found|\b[0-9a-f]{8}-|\b4\d\d\b/, words);
    seen.add(words);
  }
  assert.ok(seen.size >= cases.length - 2, "refusals share their words");
});

test("one's own email is told apart whatever its case", () => {
  assert.ok(isOwnEmail(" Ada@Example.com ", "ada@example.com"));
  assert.ok(!isOwnEmail("bea@example.com", "ada@example.com"));
});

test("an organizer reads a ticket's state and, when another holds it, who", () => {
  assert.equal(organizerTicketWords({ status: "scanned", holder_email: "ada@example.com" }, "ada@example.com"), "Checked in");
  assert.equal(organizerTicketWords({ status: "transferred", holder_email: "ada@example.com" }, "ada@example.com"), "Given away");
  assert.equal(organizerTicketWords({ status: "valid", holder_email: "bea@example.com" }, "ada@example.com"), "Valid, held by bea@example.com");
});

test("a seat is named by section, row and number; a place by its section", () => {
  assert.equal(placeName({ section: "Stalls", row: "B", number: 7 }), "Stalls, row B, seat 7");
  assert.equal(placeName({ section: "Lawn", row: "", number: 412 }), "General admission · Lawn");
});
