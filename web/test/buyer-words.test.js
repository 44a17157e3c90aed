// Buyer words (buyer-words.js): every problem type of the contract has words
// for people, and none of them says what only a developer should read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { BUYER_WORDS, buyerWords, formWords, retryWords, stillHeld } from "../static/js/buyer-words.js";
import { HELP } from "../static/js/pages/help.js";

const contract = readFileSync(new URL("../../docs/openapi.yaml", import.meta.url), "utf8");

/**
 * The slugs of components.x-problem-types: the keys indented four spaces
 * under "  x-problem-types:", up to the next key at two.
 * @returns {string[]}
 */
function problemTypes() {
  const lines = contract.split("\n");
  const start = lines.indexOf("  x-problem-types:");
  assert.ok(start >= 0, "docs/openapi.yaml has no components.x-problem-types");
  const slugs = [];
  for (const line of lines.slice(start + 1)) {
    if (/^ {0,2}\S/.test(line)) break;
    const m = /^ {4}([a-z-]+):/.exec(line);
    if (m) slugs.push(m[1]);
  }
  return slugs;
}

/** The contract's LimitName enum: the limits' names. */
function limitNames() {
  const m = /\n {4}LimitName:\n {6}type: string\n {6}enum: \[([^\]]+)\]/.exec(contract);
  assert.ok(m, "docs/openapi.yaml has no LimitName enum");
  return m[1].split(",").map((s) => s.trim());
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const ID = "3f1c9a2e-8b7d-4c6e-9f00-1234567890ab";

/**
 * A problem of the type with every member the contract defines filled in as
 * the server would, and a developer's detail that names a limit, a key and an id.
 * @param {string} slug
 */
function fullProblem(slug) {
  return {
    type: `/problems/${slug}`, title: "Developer title", status: 400,
    detail: `limit hold-buyer (10/1m) refused order ${ID}; retry with the same Idempotency-Key; circuit breaker open (level 1 of 2)`,
    limit: "hold-buyer", "violated-policies": ["hold-buyer", "checkout-buyer"], retry_after_ms: 5994,
    max_in_flight: 5, shedder: "fleet-usage", bound: "fleet-usage", unavailable_seat_ids: [ID, ID],
    max_held_seats: 10, seats_held: 8, cooldown_seat_ids: [ID], order_id: ID, not_refundable_ticket_ids: [ID],
    sold_out_sections: [{ section_id: ID, section: "Floor", asked: 4, available: 2 }],
    result: "already_scanned", first_scanned_at: "2030-09-01T19:31:00Z", ticket_id: ID, event_id: ID,
    ticket_status: "scanned",
  };
}

test("the contract's problem types are read", () => {
  const slugs = problemTypes();
  assert.ok(slugs.length >= 30, `only ${slugs.length} problem types read`);
  assert.ok(slugs.includes("too-many-concurrent-requests"));
  assert.ok(slugs.includes("payment-declined"));
});

test("every problem type of the contract has buyer words", () => {
  const missing = problemTypes().filter((slug) => !Object.hasOwn(BUYER_WORDS, slug));
  assert.deepEqual(missing, [], `problem types without buyer words in web/static/js/buyer-words.js: ${missing.join(", ")}`);
});

test("no buyer words name a limit, an Idempotency-Key, an id or the machinery", () => {
  const limits = limitNames();
  assert.ok(limits.includes("hold-buyer") && limits.includes("fleet-usage"));
  const contexts = [{}, { retryAfterMs: 61_000, holdExpiresAt: "2030-09-01T19:40:00Z", now: Date.parse("2030-09-01T19:31:48Z") }];
  for (const slug of Object.keys(BUYER_WORDS)) {
    for (const c of contexts) {
      const w = buyerWords(fullProblem(slug), c);
      const said = `${w.title} ${w.text} ${w.todo ?? ""}`;
      assert.ok(w.title.length > 0 && `${w.text}${w.todo ?? ""}`.length > 0, `${slug}: empty words`);
      for (const name of limits) assert.ok(!said.includes(name), `${slug} names the limit ${name}: ${said}`);
      assert.ok(!/idempotency/i.test(said), `${slug} names the Idempotency-Key: ${said}`);
      assert.ok(!UUID.test(said), `${slug} shows an id: ${said}`);
      assert.ok(!/circuit|sheddable|level \d of \d|Developer title/i.test(said), `${slug} says developer words: ${said}`);
      if (w.help) assert.ok(Object.hasOwn(HELP, w.help), `${slug} links a help page that does not exist: ${w.help}`);
    }
  }
});

test("a declined card says to try another and how long the seats stay held", () => {
  const w = buyerWords({ type: "/problems/payment-declined", status: 402 },
    { holdExpiresAt: "2030-09-01T19:40:00Z", now: Date.parse("2030-09-01T19:31:48Z") });
  assert.equal(w.title, "Your card was declined");
  assert.equal(`${w.text}${w.todo}`, "Try another card — your seats are still held for 8:12.");
  assert.equal(w.help, "payment");
  assert.equal(stillHeld({ holdExpiresAt: "2030-09-01T19:30:00Z", now: Date.parse("2030-09-01T19:31:48Z") }), "your seats are still held");
});

test("numbers come from the problem's fields", () => {
  const held = buyerWords({ type: "/problems/too-many-seats-held", max_held_seats: 10, seats_held: 8 });
  assert.match(held.text, /at most 10 seats/);
  assert.match(held.text, /you hold 8 already/);
  const limited = buyerWords({ type: "/problems/rate-limited", retry_after_ms: 59_000 });
  assert.match(limited.todo ?? "", /Try again in about a minute\./);
  const shortOf = buyerWords({ type: "/problems/sold-out", sold_out_sections: [{ section: "Floor", asked: 4, available: 2 }, { section: "Pit", asked: 1, available: 0 }] });
  assert.match(shortOf.text, /Floor has only 2 places left\. Pit is sold out\./);
});

test("a wait in words", () => {
  assert.equal(retryWords(null), "Try again in a moment.");
  assert.equal(retryWords(900), "Try again in a second.");
  assert.equal(retryWords(5994), "Try again in a few seconds.");
  assert.equal(retryWords(22_000), "Try again in about 20 seconds.");
  assert.equal(retryWords(60_000), "Try again in about a minute.");
  assert.equal(retryWords(5 * 60_000), "Try again in about 5 minutes.");
  assert.equal(retryWords(3600_000), "Try again in about an hour.");
});

test("a problem the page worded is shown as it is; an unknown type not by its detail", () => {
  assert.deepEqual(buyerWords({ title: "No connection", detail: "the server could not be reached; check your connection" }),
    { title: "No connection", text: "The server could not be reached; check your connection.", help: null });
  const unknown = buyerWords({ type: "/problems/something-new", title: "Something new", detail: `limit hold-buyer ${ID}` });
  assert.equal(unknown.title, "Something new");
  assert.doesNotMatch(unknown.text, /hold-buyer|[0-9a-f]{8}-/);
});

test("the organizer form's problems read as the form's words", () => {
  assert.equal(formWords("on_sale_at must not be after starts_at"), "The sale can't open after the show starts.");
  assert.equal(formWords("refunds_until must not be after starts_at"), "Refunds can't close after the show starts.");
  assert.equal(formWords("starts_at must not be before on_sale_at (2030-09-01T19:00:00Z)"), "The show can't start before the sale opens.");
  assert.equal(formWords("sections[0].rows must be between 1 and 100"), "Section 1 has between 1 and 100 rows.");
  assert.equal(formWords(`sections[1].name "Stalls" is used by another section`), "Section 2's name is used by another section: give each section its own name.");
  assert.equal(formWords("venue must not be empty"), "“Venue” must not be empty.");
  assert.equal(formWords("sections[2] is of general admission: it has a capacity, not rows or seats_per_row"),
    "Section 3 is of general admission: give its number of places, not rows and seats per row.");
  assert.equal(formWords("name must not be empty"), "“Name” must not be empty.");
  const invalid = buyerWords({ type: "/problems/invalid-request", detail: "on_sale_at must not be after starts_at" });
  assert.equal(invalid.text, "The sale can't open after the show starts.");
  assert.doesNotMatch(formWords(`hold ${ID} is not yours`), UUID);
});
