// Hash routing: "#/events/123" draws the event page in <main>. Each page is
// a function page({main, params, query, signal}); signal aborts when the
// reader leaves the page, and pages stop their timers and streams on it.

import { ApiError } from "./api.js";
import { clearNotice, showMessage, showProblem } from "./notice.js";
import { byId, h, isAbort, replace } from "./dom.js";
import { currentUser, sessionEnded } from "./session.js";

/**
 * What a page is given: the element to draw in, the route's :params, the
 * query, and a signal that aborts when the reader leaves the page.
 * @typedef {object} PageContext
 * @property {HTMLElement} main
 * @property {Record<string, string>} params
 * @property {Record<string, string>} query
 * @property {AbortSignal} signal
 */

/** @typedef {(context: PageContext) => Promise<void>} Page */

/**
 * A route: the pattern's parts (["events", ":id"]) and what it shows.
 * @template P
 * @typedef {{parts: string[], page: P}} Route
 */

/** @type {Route<Page>[]} */
const routes = [];
/** @type {AbortController | null} */
let controller = null; // aborts the page being shown
/** @type {string | null} */
let pendingMessage = null; // shown once the next page is drawn

/**
 * Adds a route: route("/events/:id", eventPage).
 * @param {string} pattern
 * @param {Page} page
 */
export function route(pattern, page) {
  routes.push({ parts: pattern.split("/").filter(Boolean), page });
}

/**
 * Goes to path ("/tickets"), optionally with a message to show there.
 * @param {string} path
 * @param {string | null} [message]
 */
export function go(path, message = null) {
  pendingMessage = message;
  if (location.hash === `#${path}`) show();
  else location.hash = path;
}

/** The current route's path and query. */
function current() {
  return parseHash(location.hash);
}

/**
 * A location's hash as a path and a query: "#/login?next=%2Ftickets" is
 * {path: "/login", query: {next: "/tickets"}}; no hash is "/events".
 * @param {string} hash
 * @returns {{path: string, query: Record<string, string>}}
 */
export function parseHash(hash) {
  const raw = hash.replace(/^#/, "") || "/events";
  const [path, search = ""] = raw.split("?");
  return { path, query: Object.fromEntries(new URLSearchParams(search)) };
}

/**
 * Finds the route for path: its page and the values of its :params
 * (decoded), or null.
 * @template P
 * @param {Route<P>[]} table
 * @param {string} path
 * @returns {{page: P, params: Record<string, string>} | null}
 */
export function matchRoute(table, path) {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const r of table) {
    if (r.parts.length !== parts.length) continue;
    /** @type {Record<string, string>} */
    const params = {};
    const ok = r.parts.every((p, i) => (p.startsWith(":") ? ((params[p.slice(1)] = parts[i]), true) : p === parts[i]));
    if (ok) return { page: r.page, params };
  }
  return null;
}

/**
 * next when it is a path of this site ("/tickets"), else null: a link's
 * ?next= never sends the reader to another site ("//evil.example").
 * @param {string | undefined} next
 * @returns {string | null}
 */
export function localPath(next) {
  return next && next.startsWith("/") && !next.startsWith("//") ? next : null;
}

/** Draws the page for the current hash. */
async function show() {
  controller?.abort(new DOMException("left the page", "AbortError"));
  controller = new AbortController();
  const { signal } = controller;
  const main = byId("main");
  clearNotice();
  if (pendingMessage) showMessage(pendingMessage);
  pendingMessage = null;

  const { path, query } = current();
  const found = matchRoute(routes, path);
  replace(main);
  if (!found) {
    setTitle(main, "Page not found");
    main.append(h("p", {}, "There is no such page. ", h("a", { href: "#/events" }, "See the events.")));
    return;
  }
  try {
    await found.page({ main, params: found.params, query, signal });
  } catch (err) {
    if (isAbort(err) || signal.aborted) return;
    if (err instanceof ApiError && err.status === 401) {
      sessionEnded();
      go(`/login?next=${encodeURIComponent(path)}`, "Please log in to continue.");
      return;
    }
    if (err instanceof ApiError) showProblem(err);
    else {
      console.error(err);
      showProblem(new ApiError(0, { title: "Something went wrong", detail: "reload the page and try again" }));
    }
  }
}

/**
 * Starts a page: sets the document's title and the page's heading, and moves
 * focus to it so that a screen reader announces the new page.
 * @param {HTMLElement} main
 * @param {string} title
 * @returns {HTMLHeadingElement}
 */
export function setTitle(main, title) {
  document.title = `${title} · Stagedoor`;
  const heading = h("h1", { tabindex: "-1" }, title);
  main.prepend(heading);
  heading.focus({ preventScroll: true });
  return heading;
}

/**
 * For pages that need an account: true when the right kind is logged in;
 * otherwise sends the reader to log in (or says the page is not for them).
 * @param {HTMLElement} main
 * @param {"buyer" | "organizer"} [kind]
 * @returns {boolean}
 */
export function requireUser(main, kind) {
  const user = currentUser();
  if (!user) {
    go(`/login?next=${encodeURIComponent(current().path)}`, "Please log in to continue.");
    return false;
  }
  if (kind && user.kind !== kind) {
    setTitle(main, "Not for this account");
    main.append(h("p", {}, `This page is for ${kind}s; you are logged in as ${user.kind === "buyer" ? "a buyer" : "an organizer"}.`));
    return false;
  }
  return true;
}

/** Starts routing: draws the current page and every page the hash changes to. */
export function startRouter() {
  window.addEventListener("hashchange", show);
  show();
}
