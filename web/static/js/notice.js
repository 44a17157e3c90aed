// The message region at the top of every page (index.html: #notice). Problems
// from the API are shown here in a buyer's words (buyer-words.js): what
// happened, what to do, and a link to the help page for the situation; the
// API's detail is for developers and is not shown. A countdown is shown when
// the server said when to come back. #notice-text has role="alert", so screen
// readers announce each message once; the countdown beside it is updated every
// second but is not live.

import { byId, h, isAbort, replace } from "./dom.js";
import { formatClock } from "./format.js";
import { buyerWords } from "./buyer-words.js";
import { retryAfterMs } from "./retry.js";

/**
 * What showProblem() shows: an ApiError, or a problem the page words itself.
 * @typedef {{problem?: import("./types.js").Problem, headers?: Headers | null}} HasProblem
 */

/** @typedef {import("./buyer-words.js").WordsContext} WordsContext */

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
 * Shows a problem (an ApiError of api.js) in a buyer's words. extra: what the
 * page says to do, in place of the words' general todo ("Those seats were just
 * taken: choose others."); context: what the page knows (the hold's end, for "your
 * seats are still held for 8:12").
 * @param {HasProblem} err
 * @param {string} [extra]
 * @param {WordsContext} [context]
 */
export function showProblem(err, extra = "", context = {}) {
  clearNotice();
  const p = err.problem || {};
  const words = buyerWords(p, { retryAfterMs: retryAfterMs(p, err.headers), ...context });
  const lines = [h("p", { class: "notice-title" }, words.title)];
  const says = [words.text, extra || words.todo || ""].filter(Boolean).join(" ");
  if (says) lines.push(h("p", {}, says));
  if (words.help) {
    // The help page for people about this situation, in a tab of its own so
    // that a hold or a payment on this page goes on.
    lines.push(h("p", {}, h("a", { href: `#/help/${words.help}`, target: "_blank", rel: "noopener" },
      "What this means", h("span", { class: "visually-hidden" }, " (opens in a new tab)"))));
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
 * @param {WordsContext} [context]
 */
export function report(err, extra = "", context = {}) {
  if (isAbort(err)) return;
  if (hasProblem(err)) return showProblem(err, extra, context);
  console.error(err);
  showProblem({ problem: { title: "Something went wrong", detail: "reload the page and try again" } }, extra);
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
