// The door's offline check of signed ticket codes (door/offline.js): the
// parser, the Ed25519 verifier and the decision, against a code signed by the
// server's own internal/ticketsign, and the device's state in its storage.
import { test } from "node:test";
import assert from "node:assert/strict";

import { decideOffline, DeviceState, looksSigned, parseSigned, verify } from "../static/js/door/offline.js";

// Signed by internal/ticketsign.Sign with the Ed25519 key whose seed is the
// bytes 1, 2, … 32, for this ticket and event.
const PUBLIC_KEY = "ebVWLo_mVPlAeLES6KmLp5AfhTrmlb7X4OORC60ElmQ";
const TICKET = "0b6f3a52-9c1e-4d7a-8f20-5e4b3c2d1a09";
const EVENT = "7e1d2c3b-4a59-4687-9a0b-c1d2e3f4a5b6";
const CODE = "SD1AEFW6OSSTQPE26UPEBPEWPBNDIEX4HJMHNFFSRUHTIF4DUXD6SS3MHNVD4IXZFFR5YIMULWZXLBF62IVH6GML5JBAUPKJAB375FBUZABU5CESGUKWETNT7REGUBXQSP5XXY6ES2EZP4TQQTUISQOPGNOB4FA";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
// Another event's key: the public key of seed 32, 31, … 1.
const OTHER_KEY = await (async () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => 32 - i);
  const pkcs8 = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20, ...seed);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", key);
  return jwk.x;
})();

/** A state holding the event's key, as after a sync. */
const synced = (over = {}) => ({ keys: { [EVENT]: PUBLIC_KEY }, boundEvent: null, revoked: {}, admitted: {}, ...over });

/** The code with character i changed to ch. */
const withChar = (code, i, ch) => code.slice(0, i) + ch + code.slice(i + 1);

test("a signed code names its ticket and event", () => {
  assert.equal(CODE.length, 159);
  assert.ok(looksSigned(CODE));
  const parsed = parseSigned(CODE);
  assert.ok(parsed);
  assert.equal(parsed.ticketId, TICKET);
  assert.equal(parsed.eventId, EVENT);
  assert.equal(parsed.payload.length, 33);
  assert.equal(parsed.payload[0], 1);
  assert.equal(parsed.signature.length, 64);
});

test("what is no signed code does not parse", () => {
  const bad = ["", "SD1", CODE.slice(0, 158), `${CODE}A`, `XX1${CODE.slice(3)}`, CODE.toLowerCase(), withChar(CODE, 20, "1"), "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"];
  for (const code of bad) assert.equal(parseSigned(code), null, code.slice(0, 24));
  assert.ok(!looksSigned("Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"));
});

test("the 15 respellings of the last character are no codes", () => {
  const last = ALPHABET.indexOf(CODE.at(-1));
  assert.equal(last & 0b1111, 0, "the code as issued has its unused bits zero");
  for (let bits = 1; bits < 16; bits += 1) {
    const respelled = withChar(CODE, CODE.length - 1, ALPHABET[last | bits]);
    assert.equal(parseSigned(respelled), null, respelled.slice(-4));
  }
});

test("the signature verifies with the event's key only", async () => {
  const parsed = parseSigned(CODE);
  assert.ok(parsed);
  assert.equal(await verify(parsed, PUBLIC_KEY), true);
  // Another ticket's id under the same signature: a forgery.
  const forged = { ...parsed, payload: Uint8Array.from(parsed.payload, (b, i) => (i === 5 ? b ^ 1 : b)) };
  assert.equal(await verify(forged, PUBLIC_KEY), false);
});

test("a synced device admits a signed ticket once, then says when", async () => {
  const state = synced();
  assert.deepEqual(await decideOffline(state, CODE), { result: "admitted", ticketId: TICKET });
  state.admitted[TICKET] = "2030-09-01T19:30:00Z";
  assert.deepEqual(await decideOffline(state, CODE), { result: "already_scanned", ticketId: TICKET, firstScannedAt: "2030-09-01T19:30:00Z" });
});

test("a revoked ticket, or another event's, is refused", async () => {
  assert.deepEqual(await decideOffline(synced({ revoked: { [TICKET]: true } }), CODE), { result: "revoked", ticketId: TICKET });
  assert.deepEqual(await decideOffline(synced({ keys: {} }), CODE), { result: "wrong_event", ticketId: TICKET });
  const bound = synced({ boundEvent: "00000000-0000-4000-8000-000000000000" });
  assert.deepEqual(await decideOffline(bound, CODE), { result: "wrong_event", ticketId: TICKET });
});

test("a code signed by another key, altered or too long is invalid; an unsigned one unverifiable", async () => {
  assert.deepEqual(await decideOffline(synced({ keys: { [EVENT]: OTHER_KEY } }), CODE), { result: "invalid" });
  // Each character of the payload's part of the code, changed.
  for (const i of [3, 10, 40, 57, 100, 158]) {
    const ch = CODE[i] === "A" ? "B" : "A";
    const d = await decideOffline(synced(), withChar(CODE, i, ch));
    assert.ok(d.result === "invalid" || d.result === "wrong_event", `character ${i}: ${d.result}`);
  }
  assert.deepEqual(await decideOffline(synced(), `SD1${"A".repeat(300)}`), { result: "invalid" });
  assert.deepEqual(await decideOffline(synced(), "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"), { result: "unverifiable" });
  assert.deepEqual(await decideOffline(synced(), "x".repeat(257)), { result: "invalid" });
});

/** A Storage kept in a Map. */
class MemoryStorage {
  items = new Map();
  getItem(name) { return this.items.get(name) ?? null; }
  setItem(name, value) { this.items.set(name, String(value)); }
  removeItem(name) { this.items.delete(name); }
}

test("the device's state survives a reload, and counts its attempts", () => {
  const storage = new MemoryStorage();
  const state = new DeviceState(storage, "door");
  assert.deepEqual(state.counts, { admitted: 0, refused: 0 });
  state.keys[EVENT] = PUBLIC_KEY;
  state.queue.push({ device_scan_id: "d1", code: CODE, scanned_at: "2030-09-01T19:30:00Z", offline: true });
  for (const kind of ["admitted", "refused", "already", "wait"]) {
    state.remember({ at: "2030-09-01T19:30:00Z", kind, word: kind, detail: "", code: "SD1AEF", offline: true });
  }
  const again = new DeviceState(storage, "door");
  assert.deepEqual(again.keys, { [EVENT]: PUBLIC_KEY });
  assert.equal(again.queue.length, 1);
  assert.deepEqual(again.counts, { admitted: 1, refused: 2 }, "a wait counts as neither");
  assert.equal(again.history[0].kind, "wait", "newest first");
  assert.ok(!JSON.parse(storage.getItem("door")).storage, "the storage itself is not saved");
  again.clear();
  assert.equal(storage.getItem("door"), null);
});

test("the list on screen keeps the 20 latest attempts", () => {
  const state = new DeviceState(new MemoryStorage());
  for (let i = 0; i < 25; i += 1) state.remember({ at: "", kind: "refused", word: String(i), detail: "", code: "", offline: false });
  assert.equal(state.history.length, 20);
  assert.equal(state.history[0].word, "24");
  assert.equal(state.counts.refused, 25);
});
