// The door's reading of a typed reference (web/static/js/reference.js), as
// the server reads it (scan.NormalizeReference), and its offline check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { normalizeReference, showReference } from "../static/js/reference.js";
import { decideOffline } from "../static/js/door/offline.js";

test("a typed reference is read in either case, with hyphens and spaces, I and L as 1, O as 0", () => {
  for (const [typed, want] of [
    ["7KQ40M2X9P", "7KQ40M2X9P"],
    ["7kq4-0m2x-9p", "7KQ40M2X9P"],
    [" 7KQ4 0M2X 9P \n", "7KQ40M2X9P"],
    ["7KQ4-OM2X-9P", "7KQ40M2X9P"],
    ["iL34-5678-9A", "113456789A"],
  ]) assert.equal(normalizeReference(typed), want, typed);
});

test("nothing else is read as a reference: wrong length, U, other characters, a ticket's code", () => {
  for (const bad of ["", "7KQ4-0M2X-9", "7KQ4-0M2X-9PA", "7KQ4-UM2X-9P", "7KQ4_0M2X_9P", "ÄKQ40M2X9P",
    "SD1AAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U", `${"-".repeat(100)}7KQ40M2X9P`]) {
    assert.equal(normalizeReference(bad), null, bad);
  }
});

test("a reference is shown grouped 4-4-2", () => {
  assert.equal(showReference("7KQ40M2X9P"), "7KQ4-0M2X-9P");
  assert.equal(showReference("short"), "short");
});

/** A device that synced the list of event E's tickets. */
const synced = () => ({
  keys: {},
  boundEvent: "e1",
  revoked: /** @type {Record<string, true>} */ ({}),
  admitted: /** @type {Record<string, string>} */ ({}),
  references: {
    "7KQ40M2X9P": { ticket_id: "t1", event_id: "e1", seat: { section: "Floor", row: "A", number: 3, general_admission: false } },
    "ZZZZZZZZZZ": { ticket_id: "t2", event_id: "e2", seat: { section: "Floor", row: "B", number: 1, general_admission: false } },
  },
});

test("offline, a typed reference of the list admits once, with its seat; revoked, unknown or another event's do not", async () => {
  const state = synced();
  const first = await decideOffline(state, "7kq4-0m2x-9p");
  assert.equal(first.result, "admitted");
  assert.equal(first.ticketId, "t1");
  assert.equal(first.seat?.row, "A");
  state.admitted.t1 = "2026-12-03T12:00:00Z";
  const again = await decideOffline(state, "7KQ40M2X9P");
  assert.equal(again.result, "already_scanned");
  assert.equal(again.firstScannedAt, "2026-12-03T12:00:00Z");
  state.revoked.t1 = true;
  assert.equal((await decideOffline(state, "7KQ40M2X9P")).result, "revoked");
  // Not on the list (bought after the last sync): checked once online, not admitted here.
  assert.equal((await decideOffline(state, "1111111111")).result, "unverifiable");
  // Another event's, on an unbound device's list, at a device bound to e1.
  assert.equal((await decideOffline(state, "zzzz-zzzz-zz")).result, "unverifiable");
});
