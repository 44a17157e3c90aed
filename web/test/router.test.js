// The router's pure parts (router.js): the hash as a path and a query, the
// route a path matches, and the ?next= a login may follow.
import { test } from "node:test";
import assert from "node:assert/strict";

import { localPath, matchRoute, parseHash } from "../static/js/router.js";

test("a hash is a path and a query; no hash is the events", () => {
  assert.deepEqual(parseHash("#/login?next=%2Ftickets&x=1"), { path: "/login", query: { next: "/tickets", x: "1" } });
  assert.deepEqual(parseHash("#/events/42"), { path: "/events/42", query: {} });
  assert.deepEqual(parseHash(""), { path: "/events", query: {} });
  assert.deepEqual(parseHash("#"), { path: "/events", query: {} });
});

test("a path matches the route of its shape, with its params decoded", () => {
  const table = ["/events", "/events/:id", "/organizer/events/new", "/organizer/events/:id/scans"]
    .map((pattern) => ({ parts: pattern.split("/").filter(Boolean), page: pattern }));
  assert.deepEqual(matchRoute(table, "/events"), { page: "/events", params: {} });
  assert.deepEqual(matchRoute(table, "/events/a%20b"), { page: "/events/:id", params: { id: "a b" } });
  assert.deepEqual(matchRoute(table, "/organizer/events/new"), { page: "/organizer/events/new", params: {} });
  assert.deepEqual(matchRoute(table, "/organizer/events/7/scans"), { page: "/organizer/events/:id/scans", params: { id: "7" } });
  assert.equal(matchRoute(table, "/events/7/seats"), null);
  assert.equal(matchRoute(table, "/nowhere"), null);
});

test("?next= is followed only to a page of this site", () => {
  assert.equal(localPath("/tickets"), "/tickets");
  assert.equal(localPath("/events/7?x=1"), "/events/7?x=1");
  for (const away of ["//evil.example", "https://evil.example", "evil", "", undefined]) assert.equal(localPath(away), null, String(away));
});
