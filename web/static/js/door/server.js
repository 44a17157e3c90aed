// The door's calls to Stagedoor, with the scanner key (X-Api-Key), each under
// a short deadline: at the door a slow answer is as bad as none, and the
// device then decides offline.

import { isAbort } from "../dom.js";
import { retryAfterMs } from "../retry.js";

/**
 * @typedef {import("../types.js").Problem} Problem
 * @typedef {import("../types.js").QueuedScan} QueuedScan
 */

/** The server could not be reached, or did not answer in time. */
export class Unreachable extends Error {}

/**
 * An answer, with what the door needs of it. body is the JSON (null when
 * there was none): T on a 2xx, a Problem otherwise.
 * @template T
 */
export class Answer {
  /**
   * @param {number} status
   * @param {Headers} headers
   * @param {T | Problem | null} body
   */
  constructor(status, headers, body) {
    this.status = status;
    this.body = body;
    // The problem's retry_after_ms, or Retry-After in seconds: when to try again (0: not said).
    this.retryAfterMs = retryAfterMs(body && typeof body === "object" ? body : null, headers) ?? 0;
  }

  /**
   * The 2xx answer's JSON, or null (another status, or no JSON).
   * @returns {T | null}
   */
  get ok() {
    return this.status >= 200 && this.status < 300 ? /** @type {T | null} */ (this.body) : null;
  }

  /**
   * The problem of an answer that is not 2xx (empty when it sent none).
   * @returns {Problem}
   */
  get problem() {
    return this.ok === null && this.body && typeof this.body === "object" ? /** @type {Problem} */ (this.body) : {};
  }
}

export class Server {
  /**
   * @param {string} key the scanner key
   * @param {{timeoutMs?: number}} [options]
   */
  constructor(key, { timeoutMs = 2500 } = {}) {
    this.key = key;
    this.timeoutMs = timeoutMs;
  }

  /**
   * One call, under the deadline. Throws Unreachable when there is no answer.
   * @template T
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<Answer<T>>}
   */
  async call(method, path, body) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: { "X-Api-Key": this.key, ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: abort.signal,
        cache: "no-store",
        credentials: "omit", // the scanner key is the credential, never a cookie
      });
    } catch (err) {
      throw new Unreachable(isAbort(err) ? "no answer in time" : "the network is down");
    } finally {
      clearTimeout(timer);
    }
    /** @type {T | Problem | null} */
    let json = null;
    try {
      json = await response.json();
    } catch {
      /* no body */
    }
    return new Answer(response.status, response.headers, json);
  }

  /**
   * POST /v1/scans: asks the server whether the ticket of code is admitted.
   * @param {string} code
   * @returns {Promise<Answer<import("../types.js").Admission>>}
   */
  scan(code) {
    return this.call("POST", "/v1/scans", { code });
  }

  /**
   * GET /v1/scanner/keyset: the public keys of the events this key admits.
   * @returns {Promise<Answer<import("../types.js").Keyset>>}
   */
  keyset() {
    return this.call("GET", "/v1/scanner/keyset");
  }

  /**
   * GET /v1/scanner/revocations after a revocation number.
   * @param {string} after
   * @returns {Promise<Answer<import("../types.js").Revocations>>}
   */
  revocations(after) {
    return this.call("GET", `/v1/scanner/revocations?after=${encodeURIComponent(after)}`);
  }

  /**
   * GET /v1/scanner/tickets after a ticket id: the tickets that admit, with their references.
   * @param {string} after
   * @returns {Promise<Answer<import("../types.js").ListedTickets>>}
   */
  tickets(after) {
    return this.call("GET", `/v1/scanner/tickets${after ? `?after=${encodeURIComponent(after)}` : ""}`);
  }

  /**
   * POST /v1/scans/batch: uploads queued scans.
   * @param {QueuedScan[]} scans
   * @returns {Promise<Answer<import("../types.js").UploadResults>>}
   */
  upload(scans) {
    return this.call("POST", "/v1/scans/batch", { scans });
  }
}
