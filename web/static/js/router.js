// Hash routing: "#/events/123" draws the event page in <main>. Each page is
// a function page({main, params, query, signal}); signal aborts when the
// reader leaves the page, and pages stop their timers and streams on it.

import { ApiError } from "./api.js";
import { clearNotice, showMessage, showProblem } from "./notice.js";
import { h, replace } from "./dom.js";
import { currentUser, sessionEnded } from "./session.js";

const routes = []; // [{parts: ["events", ":id"], page}]
let controller = null; // aborts the page being shown
let pendingMessage = null; // shown once the next page is drawn

/** Adds a route: route("/events/:id", eventPage). */
export function route(pattern, page) {
  routes.push({ parts: pattern.split("/").filter(Boolean), page });
}

/** Goes to path ("/tickets"), optionally with a message to show there. */
export function go(path, message = null) {
  pendingMessage = message;
  if (location.hash === `#${path}`) show();
  else location.hash = path;
}

/** The current route's path and query, e.g. {path: "/login", query: {next: "/tickets"}}. */
function current() {
  const raw = location.hash.replace(/^#/, "") || "/events";
  const [path, search = ""] = raw.split("?");
  return { path, query: Object.fromEntries(new URLSearchParams(search)) };
}

/** Finds the route for path: its page and the values of its :params. */
function match(path) {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const r of routes) {
    if (r.parts.length !== parts.length) continue;
    const params = {};
    const ok = r.parts.every((p, i) => (p.startsWith(":") ? ((params[p.slice(1)] = parts[i]), true) : p === parts[i]));
    if (ok) return { page: r.page, params };
  }
  return null;
}

/** Draws the page for the current hash. */
async function show() {
  controller?.abort(new DOMException("left the page", "AbortError"));
  controller = new AbortController();
  const { signal } = controller;
  const main = document.getElementById("main");
  clearNotice();
  if (pendingMessage) showMessage(pendingMessage);
  pendingMessage = null;

  const { path, query } = current();
  const found = match(path);
  replace(main);
  if (!found) {
    setTitle(main, "Page not found");
    main.append(h("p", {}, "There is no such page. ", h("a", { href: "#/events" }, "See the events.")));
    return;
  }
  try {
    await found.page({ main, params: found.params, query, signal });
  } catch (err) {
    if (err.name === "AbortError" || signal.aborted) return;
    if (err instanceof ApiError && err.status === 401) {
      sessionEnded();
      go(`/login?next=${encodeURIComponent(path)}`, "Please log in to continue.");
      return;
    }
    if (err instanceof ApiError) showProblem(err);
    else {
      console.error(err);
      showProblem(new ApiError(0, { title: "Something went wrong", detail: String(err.message || err) }));
    }
  }
}

/**
 * Starts a page: sets the document's title and the page's heading, and moves
 * focus to it so that a screen reader announces the new page.
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
