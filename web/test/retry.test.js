// When to try again: retry_after_ms and Retry-After (retry.js), as ApiError and
// the door's Answer read them, and the back-off when the server names no wait.
import { test } from "node:test";
import assert from "node:assert/strict";

import { backoffMs, retryAfterMs } from "../static/js/retry.js";
import { ApiError, isTemporary } from "../static/js/api.js";
import { Answer } from "../static/js/door/server.js";

const retryAfter = (value) => new Headers(value === undefined ? {} : { "Retry-After": value });

test("retry_after_ms is exact and wins over Retry-After", () => {
  assert.equal(retryAfterMs({ retry_after_ms: 5994 }, retryAfter("6")), 5994);
  assert.equal(retryAfterMs({ retry_after_ms: 0 }, retryAfter("6")), 0);
});

test("Retry-After is whole seconds, when the problem has no retry_after_ms", () => {
  assert.equal(retryAfterMs({}, retryAfter("6")), 6000);
  assert.equal(retryAfterMs(null, retryAfter("1")), 1000);
  assert.equal(retryAfterMs(undefined, retryAfter(" 2 ")), 2000);
});

test("no wait said, or one that is no number of seconds, is null", () => {
  for (const value of [undefined, "", "0", "-3", "soon", "Wed, 21 Oct 2026 07:28:00 GMT"]) {
    assert.equal(retryAfterMs({}, retryAfter(value)), null, `Retry-After: ${value}`);
  }
  assert.equal(retryAfterMs({}, null), null);
  // A retry_after_ms that is no count of ms is not believed: the header decides.
  for (const bad of ["5994", -1, Number.NaN, Infinity, null]) {
    assert.equal(retryAfterMs({ retry_after_ms: bad }, retryAfter("3")), 3000, `retry_after_ms: ${bad}`);
  }
});

test("the back-off doubles from 1 s and stops at 30 s", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test("ApiError reads its problem: the wait, the slug, the message", () => {
  const err = new ApiError(429, { type: "/problems/rate-limited", title: "Too many requests", detail: "limit hold-buyer refused", retry_after_ms: 1500 }, retryAfter("2"));
  assert.equal(err.retryAfterMs, 1500);
  assert.equal(err.slug, "rate-limited");
  assert.equal(err.message, "limit hold-buyer refused");
  assert.ok(isTemporary(err));

  const header = new ApiError(503, { type: "/problems/service-overloaded", title: "Service overloaded" }, retryAfter("4"));
  assert.equal(header.retryAfterMs, 4000);
  assert.equal(header.message, "Service overloaded");

  const offline = new ApiError(0, { title: "No connection" });
  assert.equal(offline.retryAfterMs, null);
  assert.equal(offline.slug, "");
  assert.ok(isTemporary(offline));
  assert.ok(!isTemporary(new ApiError(409, { type: "/problems/seats-unavailable" })));
  assert.ok(!isTemporary(new Error("not an answer")));
});

test("the door's Answer reads the same wait, 0 when none was said", () => {
  assert.equal(new Answer(429, retryAfter("2"), { retry_after_ms: 1200 }).retryAfterMs, 1200);
  assert.equal(new Answer(503, retryAfter("3"), null).retryAfterMs, 3000);
  assert.equal(new Answer(503, retryAfter(), { title: "Service overloaded" }).retryAfterMs, 0);
});
