// The message region at the top of every page (index.html: #notice). Problems
// from the API are shown here in words, never as JSON: the title, the detail,
// the limit that refused, and a countdown when the server said when to come
// back. #notice-text has role="alert", so screen readers announce each message
// once; the countdown beside it is updated every second but is not live.

import { byId, h, isAbort, replace } from "./dom.js";
import { formatClock } from "./format.js";

/**
 * What showProblem() shows: an ApiError, or a problem the page words itself.
 * @typedef {{problem?: import("./types.js").Problem}} HasProblem
 */

const box = () => byId("notice");
const text = () => byId("notice-text");
const clock = () => byId("notice-countdown");
const dismiss = () => byId("notice-dismiss");

/** @type {ReturnType<typeof setInterval> | undefined} */
let ticking; // the countdown's interval, while one runs

/** Removes the message and stops its countdown. */
export function clearNotice() {
  stopCountdown();
  replace(text());
  box().className = "notice";
  dismiss().hidden = true;
}

/**
 * Shows a short message of success or information ("Event created").
 * @param {string} message
 */
export function showMessage(message) {
  clearNotice();
  replace(text(), h("p", {}, message));
  box().className = "notice notice-info";
  dismiss().hidden = false;
}

/**
 * Shows a problem (an ApiError of api.js) in words. extra: more sentences the
 * page adds ("Your seats are still held: choose another card.").
 * @param {HasProblem} err
 * @param {string} [extra]
 */
export function showProblem(err, extra = "") {
  clearNotice();
  const p = err.problem || {};
  const lines = [h("p", { class: "notice-title" }, p.title || "Something went wrong")];
  // A refusal's detail ends "retry in 5994 ms", which the countdown shows better.
  const detail = (p.detail || "").replace(/;?\s*retry in \d+ ?ms\s*$/i, "");
  if (detail) lines.push(h("p", {}, sentence(detail)));
  if (p.limit && !detail.includes(p.limit)) lines.push(h("p", {}, `Refused by limit ${p.limit}.`));
  if (extra) lines.push(h("p", {}, extra));
  if (typeof p.type === "string" && p.type.startsWith("/problems/")) {
    // The server's own page about this kind of problem, same origin.
    lines.push(h("p", {}, h("a", { href: p.type, target: "_blank", rel: "noopener" }, "What this means")));
  }
  replace(text(), lines);
  box().className = "notice notice-problem";
  dismiss().hidden = false;
  // Seen as well as heard: the message is at the top, the button pressed may not be.
  box().scrollIntoView({ block: "nearest" });
}

/**
 * Counts down ms in the notice ("Trying again in 0:12") and resolves when it
 * reaches zero; rejects when signal aborts (the page was left).
 * @param {number} ms
 * @param {string} label
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
export function countdown(ms, label, signal) {
  stopCountdown();
  const until = Date.now() + ms;
  const draw = () => {
    clock().textContent = `${label} in ${formatClock(until - Date.now())}`;
  };
  draw();
  return new Promise(/** @type {(resolve: () => void, reject: (reason: unknown) => void) => void} */ ((resolve, reject) => {
    ticking = setInterval(() => {
      if (Date.now() >= until) {
        stopCountdown();
        resolve();
      } else draw();
    }, 250);
    signal?.addEventListener("abort", () => {
      stopCountdown();
      reject(signal.reason);
    }, { once: true });
  }));
}

function stopCountdown() {
  clearInterval(ticking);
  ticking = undefined;
  clock().textContent = "";
}

/**
 * "limit hold-buyer (10/1m) refused this request" → "Limit hold-buyer (10/1m) refused this request."
 * @param {string} s
 * @returns {string}
 */
function sentence(s) {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]\)?$/.test(t) ? t : `${t}.`;
}

/** Wires the Dismiss button once, at start. */
export function initNotice() {
  dismiss().addEventListener("click", clearNotice);
}

/**
 * Shows a refusal the user may try again after (a 429 of login, a 503 …),
 * with a countdown to when they may, but does not retry by itself.
 * @param {unknown} err an ApiError, whose retryAfterMs says when
 * @param {AbortSignal} [signal]
 */
export function showRefusal(err, signal) {
  report(err);
  const ms = hasProblem(err) && "retryAfterMs" in err && typeof err.retryAfterMs === "number" ? err.retryAfterMs : null;
  if (ms) countdown(ms, "You can try again", signal).catch(() => {});
}

/**
 * Shows what went wrong in an event handler: a problem of the API in words,
 * any other error by its message. Leaving the page (AbortError) is no error.
 * @param {unknown} err
 * @param {string} [extra]
 */
export function report(err, extra = "") {
  if (isAbort(err)) return;
  if (hasProblem(err)) return showProblem(err, extra);
  console.error(err);
  showProblem({ problem: { title: "Something went wrong", detail: errorText(err) } }, extra);
}

/**
 * Whether err carries a problem to show: an ApiError.
 * @param {unknown} err
 * @returns {err is HasProblem}
 */
function hasProblem(err) {
  return typeof err === "object" && err !== null && "problem" in err;
}

/**
 * An error's message, or the thing thrown in words.
 * @param {unknown} err
 * @returns {string}
 */
export function errorText(err) {
  return String((err instanceof Error && err.message) || err);
}
