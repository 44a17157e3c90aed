// What the door shows for each answer of POST /v1/scans and each offline
// decision (door/verdicts.js). The script sets the locale (en-US) and UTC.
import { test } from "node:test";
import assert from "node:assert/strict";

import { Answer } from "../static/js/door/server.js";
import { KEY_REVOKED, LastScan, offlineVerdict, onlineVerdict, retryWait, revokedNotice, shortId, shownDetail } from "../static/js/door/verdicts.js";

const TICKET = "0b6f3a52-9c1e-4d7a-8f20-5e4b3c2d1a09";
const answer = (status, body, headers = {}) => new Answer(status, new Headers(headers), body);

test("an admission names the seat", () => {
  const admitted = answer(200, { result: "admitted", ticket_id: TICKET, event_id: TICKET, seat: { section: "Stalls", row: "B", number: 7 }, scanned_at: "2030-09-01T19:30:00Z" });
  assert.deepEqual(onlineVerdict(admitted), { kind: "admitted", word: "Admitted", detail: "Stalls · row B · seat 7" });
});

test("an admission of a place of general admission names its section, not a seat", () => {
  const admitted = answer(200, { result: "admitted", ticket_id: TICKET, event_id: TICKET,
    seat: { section: "Lawn", row: "", number: 412, general_admission: true }, scanned_at: "2030-09-01T19:30:00Z" });
  assert.deepEqual(onlineVerdict(admitted), { kind: "admitted", word: "Admitted", detail: "General admission · Lawn" });
});

test("each refusal in words", () => {
  const rejected = (result, more = {}) => answer(result === "invalid" ? 404 : 409, { type: "/problems/scan-rejected", result, ...more });
  assert.deepEqual(onlineVerdict(rejected("already_scanned", { first_scanned_at: "2030-09-01T19:30:05Z" })),
    { kind: "already", word: "Already scanned", detail: "at 07:30:05 PM" });
  assert.equal(onlineVerdict(rejected("wrong_event")).word, "Wrong event");
  assert.equal(onlineVerdict(rejected("revoked")).word, "Revoked");
  assert.equal(onlineVerdict(rejected("invalid")).word, "Invalid");
  assert.deepEqual(onlineVerdict(answer(400, { detail: "code: too long" })), { kind: "refused", word: "Not a ticket", detail: "code: too long" });
  assert.deepEqual(onlineVerdict(answer(401, null)), KEY_REVOKED);
  assert.deepEqual(onlineVerdict(answer(500, { detail: "boom" })), { kind: "refused", word: "Error 500", detail: "boom" });
  assert.deepEqual(onlineVerdict(answer(502, null)), { kind: "refused", word: "Error 502", detail: "unexpected answer" });
});

test("a busy server's scan waits the time it asked for, 1 s when it named none", () => {
  const limited = answer(429, { retry_after_ms: 2400 });
  assert.equal(retryWait(limited), 2400);
  assert.deepEqual(onlineVerdict(limited), { kind: "wait", word: "Wait", detail: "the server is busy: this scan is retried by itself in 3 s" });
  const busy = answer(503, null);
  assert.equal(retryWait(busy), 1000);
  assert.equal(onlineVerdict(busy).detail, "the server is busy: this scan is retried by itself in 1 s");
});

test("each offline decision in words, marked offline", () => {
  assert.deepEqual(offlineVerdict({ result: "admitted", ticketId: TICKET }), { kind: "admitted", word: "Admitted", detail: "ticket 0b6f3a52", offline: true });
  assert.equal(offlineVerdict({ result: "already_scanned", ticketId: TICKET, firstScannedAt: "2030-09-01T08:00:00Z" }).detail, "at 08:00:00 AM on this device");
  const words = ["unverifiable", "wrong_event", "revoked", "invalid"].map((result) => offlineVerdict({ result }));
  assert.deepEqual(words.map((v) => v.word), ["Cannot check offline", "Wrong event", "Revoked", "Invalid"]);
  assert.ok(words.every((v) => v.kind === "refused" && v.offline));
});

test("the revoked key's notice says what became of the scans", () => {
  assert.match(revokedNotice(1, 0), /^1 scan could not be uploaded: it was made/);
  assert.match(revokedNotice(3, 2), /^3 scans could not be uploaded: they were made/);
  assert.equal(revokedNotice(0, 2), "2 scans made before the revocation still wait to upload; keep this device connected.");
  assert.equal(revokedNotice(0, 0), "Every scan this device made before the revocation was uploaded.");
});

test("a short id is the first 8 characters", () => {
  assert.equal(shortId(TICKET), "0b6f3a52");
  assert.equal(shortId(undefined), "");
});

test("the last code read again within 10 s shows its verdict again, just now", () => {
  const last = new LastScan();
  const admitted = { kind: "admitted", word: "Admitted", detail: "Stalls · row B · seat 7" };
  assert.equal(last.again("SD1A", 0), null, "nothing scanned yet");
  last.remember("SD1A", admitted, 1000);
  assert.deepEqual(last.again("SD1A", 4000), { ...admitted, again: true });
  assert.equal(shownDetail(/** @type {any} */ (last.again("SD1A", 13_999))), "Stalls · row B · seat 7 · just now",
    "each reading starts the window anew: a ticket left in front of the camera keeps its verdict");
  assert.equal(last.again("SD1A", 24_000), null, "10 s after the last reading: decided anew");
  last.remember("SD1A", admitted, 30_000);
  assert.equal(last.again("SD1B", 31_000), null, "another code is decided");
  last.remember("SD1B", { kind: "refused", word: "Invalid", detail: "no ticket has this code" }, 31_000);
  assert.equal(last.again("SD1A", 32_000), null, "the first code after another: a second use, decided");
  assert.equal(last.again("SD1B", 32_000)?.word, "Invalid", "a refusal is shown again too");
  last.remember("SD1C", { kind: "wait", word: "Wait", detail: "the server is busy" }, 33_000);
  assert.equal(last.again("SD1C", 34_000), null, "a wait is tried again, not shown again");
});

test("a verdict's detail as shown", () => {
  assert.equal(shownDetail({ kind: "admitted", word: "Admitted", detail: "ticket 0b6f3a52", offline: true, again: true }), "ticket 0b6f3a52 · offline · just now");
  assert.equal(shownDetail({ kind: "admitted", word: "Admitted", detail: "", again: true }), "just now");
  assert.equal(shownDetail({ kind: "refused", word: "Invalid", detail: "no ticket has this code" }), "no ticket has this code");
});
