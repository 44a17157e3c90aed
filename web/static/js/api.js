// The API client: fetch with JSON bodies and the session cookie (same origin,
// so fetch sends it and the Origin header by itself; the page never sees the
// session token). Every answer that is not 2xx becomes an ApiError holding the
// RFC 9457 problem (application/problem+json) the server sent.

import { isAbort } from "./dom.js";
import { countdown, showProblem, clearNotice } from "./notice.js";
import { backoffMs, retryAfterMs } from "./retry.js";

/** @typedef {import("./types.js").Problem} Problem */

/**
 * An answer of the API.
 * @template T
 * @typedef {{status: number, data: T, headers: Headers}} Answer
 */

/**
 * What api() takes besides the method and path.
 * @typedef {object} RequestOptions
 * @property {unknown} [body] sent as JSON
 * @property {Record<string, string>} [headers]
 * @property {AbortSignal} [signal]
 */

/** An answer that was not 2xx (or no answer at all: status 0). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Problem} problem
   * @param {Headers | null} [headers]
   */
  constructor(status, problem, headers = null) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem;
    this.headers = headers;
  }

  /** The problem's kind: "rate-limited", "payment-declined", … */
  get slug() {
    const type = this.problem.type || "";
    return type.startsWith("/problems/") ? type.slice("/problems/".length) : "";
  }

  /**
   * How long the server asked us to wait, in ms: retry_after_ms when the
   * problem has it (exact), else the Retry-After header (whole seconds), else null.
   */
  get retryAfterMs() {
    return retryAfterMs(this.problem, this.headers);
  }
}

/**
 * Sends one request. Returns {status, data, headers}, data being the parsed
 * JSON (null for 204). Throws ApiError for any other answer, and for no
 * answer at all (status 0: the network), but rethrows an AbortError as is.
 * The caller names the JSON it expects (T): the check trusts the contract.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<Answer<T>>}
 */
export async function api(method, path, { body, headers = {}, signal } = {}) {
  /** @type {Record<string, string>} */
  const sent = { Accept: "application/json", ...headers };
  /** @type {RequestInit} */
  const init = { method, headers: sent, signal, credentials: "same-origin" };
  if (body !== undefined) {
    sent["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new ApiError(0, { title: "No connection", detail: "the server could not be reached; check your connection" }, null);
  }
  const type = response.headers.get("Content-Type") || "";
  const data = response.status === 204 ? null
    : type.includes("json") ? await response.json().catch(() => null)
      : null;
  if (response.ok) return { status: response.status, data, headers: response.headers };
  const problem = data && typeof data === "object" ? data
    : { title: response.statusText || "Error", detail: `the server answered ${response.status}` };
  throw new ApiError(response.status, problem, response.headers);
}

/**
 * GET path, answering its JSON.
 * @template [T=unknown]
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<T>}
 */
export async function get(path, options) {
  /** @type {Answer<T>} */
  const answer = await api("GET", path, options);
  return answer.data;
}

/**
 * Whether the problem says "not now, later": a limit (429), an instance at a
 * bound or a store down (503), or no connection at all.
 */
/**
 * @param {unknown} err
 * @returns {err is ApiError}
 */
export function isTemporary(err) {
  return err instanceof ApiError && (err.status === 429 || err.status === 503 || err.status === 0);
}

/**
 * Calls request() until it succeeds, waiting out temporary refusals: each is
 * shown in the notice with a countdown, then request() is called again. Use it
 * for reads (idempotent) and for actions the user asked for that are safe to
 * repeat. Any other error is thrown to the caller; so is leaving the page
 * (signal aborts).
 * @template T
 * @param {() => Promise<T>} request
 * @param {AbortSignal} [signal]
 * @returns {Promise<T>}
 */
export async function retrying(request, signal) {
  let shown = false;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await request();
      if (shown) clearNotice();
      return result;
    } catch (err) {
      if (!isTemporary(err)) throw err;
      // The server's word when it gave one; else back off 1, 2, 4 … 30 s.
      const wait = err.retryAfterMs ?? backoffMs(attempt);
      showProblem(err, "This page tries again by itself when the countdown ends.");
      shown = true;
      await countdown(Math.max(wait, 250), "Trying again", signal);
    }
  }
}

/**
 * An event (GET /v1/events/{id}), waiting out temporary refusals.
 * @param {string} id
 * @param {AbortSignal} signal
 * @returns {Promise<import("./types.js").Event>}
 */
export function readEvent(id, signal) {
  return retrying(() => get(`/v1/events/${encodeURIComponent(id)}`, { signal }), signal);
}

/**
 * An event's seat map (GET /v1/events/{id}/seats), waiting out temporary refusals.
 * @param {string} id
 * @param {AbortSignal} signal
 * @returns {Promise<import("./types.js").SeatMap>}
 */
export function readSeatMap(id, signal) {
  return retrying(() => get(`/v1/events/${encodeURIComponent(id)}/seats`, { signal }), signal);
}
