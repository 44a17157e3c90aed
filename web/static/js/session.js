// Who is logged in. The browser's session is a cookie (HttpOnly: this code
// never sees the token): POST /v1/web/session logs in and sets it, DELETE logs
// out, GET says who it is (200 when nobody too: a visitor who is not logged in
// meets no error in the console).

import { api } from "./api.js";

/** @typedef {import("./types.js").Principal} Principal */

/** @type {Principal | null} */
let principal = null;
/** @type {Set<(p: Principal | null) => void>} */
const listeners = new Set();

/**
 * The logged-in account, or null.
 * @returns {Principal | null}
 */
export function currentUser() {
  return principal;
}

/**
 * Calls fn(principal) whenever who is logged in changes.
 * @param {(p: Principal | null) => void} fn
 */
export function onSessionChange(fn) {
  listeners.add(fn);
}

/** @param {Principal | null} p */
function set(p) {
  principal = p;
  for (const fn of listeners) fn(p);
}

/**
 * Asks the server who the cookie belongs to (at start).
 * @returns {Promise<Principal | null>}
 */
export async function loadSession() {
  /** @type {import("./api.js").Answer<import("./types.js").WebSessionState>} */
  const { data } = await api("GET", "/v1/web/session");
  set(data.authenticated && data.principal ? data.principal : null);
  return principal;
}

/**
 * Logs in; the server sets the session cookie. Throws ApiError (401, 429 …).
 * @param {string} email
 * @param {string} password
 * @returns {Promise<Principal>}
 */
export async function logIn(email, password) {
  /** @type {import("./api.js").Answer<import("./types.js").WebSession>} */
  const { data } = await api("POST", "/v1/web/session", { body: { email, password } });
  set(data.principal);
  return data.principal;
}

/** Logs out; the server ends the session and clears the cookie. */
export async function logOut() {
  try {
    await api("DELETE", "/v1/web/session");
  } finally {
    set(null);
  }
}

/** Forgets the account after a 401 told us the session is gone. */
export function sessionEnded() {
  if (principal) set(null);
}
