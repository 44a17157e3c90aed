// The API client: fetch with JSON bodies and the session cookie (same origin,
// so fetch sends it and the Origin header by itself; the page never sees the
// session token). Every answer that is not 2xx becomes an ApiError holding the
// RFC 9457 problem (application/problem+json) the server sent.

import { countdown, showProblem, clearNotice } from "./notice.js";

/** An answer that was not 2xx (or no answer at all: status 0). */
export class ApiError extends Error {
  constructor(status, problem, headers) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem; // {type, title, status, detail, limit, retry_after_ms, …}
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
    if (Number.isFinite(this.problem.retry_after_ms)) return this.problem.retry_after_ms;
    const seconds = Number(this.headers?.get("Retry-After"));
    return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
  }
}

/**
 * Sends one request. Returns {status, data, headers}, data being the parsed
 * JSON (null for 204). Throws ApiError for any other answer, and for no
 * answer at all (status 0: the network), but rethrows an AbortError as is.
 */
export async function api(method, path, { body, headers = {}, signal } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers }, signal, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err.name === "AbortError") throw err;
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

/** GET path, answering its JSON. */
export async function get(path, options) {
  return (await api("GET", path, options)).data;
}

/**
 * Whether the problem says "not now, later": a limit (429), an instance at a
 * bound or a store down (503), or no connection at all.
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
      const wait = err.retryAfterMs ?? Math.min(30_000, 1000 * 2 ** (attempt - 1));
      showProblem(err);
      shown = true;
      await countdown(Math.max(wait, 250), "Trying again", signal);
    }
  }
}
