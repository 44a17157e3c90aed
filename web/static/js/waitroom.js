// The waiting room of a hot on-sale: the buyer joins the event's queue
// (POST /v1/events/{id}/queue), then polls their place (GET, not limited) until
// admitted. Polls back off from 1 s, doubling up to 10 s, and come sooner when
// the estimated wait says the turn is near. Each answer carries a queue token,
// sent back with the next poll (Queue-Token): the server then answers it
// without asking the room's store. An admission lasts until admitted_until;
// after it, the buyer joins again. When the sale has nothing left the answer
// says so: sold_out, or closed (for now while every seat left is in someone's
// basket: polls go on, and the room reopens when one comes back; for good
// once the event has started). The organizer may pause the room: the buyer
// is told so, keeps her place, and polls go on.

import { api, ApiError, get, retrying } from "./api.js";
import { h, onAbort, replace, sleep } from "./dom.js";
import { formatClock, formatTime, formatWait } from "./format.js";
import { report } from "./notice.js";

const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 10_000;
// While the organizer has paused the sale, polls come at least this often, so
// that the buyer sees it go on soon (a poll with a token costs the room nothing).
const PAUSED_POLL_MS = 5000;

/** @typedef {import("./types.js").QueueStatus} QueueStatus */

/**
 * The waiting-room panel of an event. onAdmitted(until) is called when the
 * buyer may hold seats, onLapsed() when they may no longer. Returns
 * {element, start, recheck}.
 * @param {string} eventId
 * @param {object} options
 * @param {AbortSignal} options.signal
 * @param {(until: Date) => void} options.onAdmitted
 * @param {() => void} options.onLapsed
 * @returns {{element: HTMLElement, start: () => Promise<void>, recheck: () => Promise<void>}}
 */
export function waitingRoom(eventId, { signal, onAdmitted, onLapsed }) {
  const path = `/v1/events/${encodeURIComponent(eventId)}/queue`;
  const status = h("div", { role: "status", class: "queue-status" });
  const element = h("section", { class: "panel queue", "aria-labelledby": "queue-heading" },
    h("h2", { id: "queue-heading" }, "Waiting room"), status);

  let generation = 0; // each (re)start invalidates the loops of the one before
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  /** @type {string | null} */
  let token = null; // the queue_token of the last answer, for the next poll
  onAbort(signal, () => clearInterval(timer));

  /**
   * Draws the state answered by the server ({status, position, …}) or null (not in the queue).
   * @param {QueueStatus | null} place
   */
  function show(place) {
    clearInterval(timer);
    if (!place) {
      const join = h("button", { type: "button", class: "primary" }, "Join the queue");
      join.addEventListener("click", () => joinQueue(join).catch(report));
      replace(status,
        h("p", {}, "This sale has a waiting room. Join the queue, and you can choose seats when it is your turn."),
        join);
      return;
    }
    if (place.status === "sold_out") {
      replace(status,
        h("p", { class: "queue-over" }, "Sold out."),
        h("p", {}, "Every seat has been sold. Thank you for waiting."));
      return;
    }
    if (place.status === "closed" && place.closed_reason === "event_started") {
      replace(status,
        h("p", { class: "queue-over" }, "The sale is over."),
        h("p", {}, "The event has started, so no more seats can be bought."));
      return;
    }
    if (place.status === "closed") {
      const where = place.position ? `You keep your place: number ${place.position} in the queue.`
        : `Your turn lasts until ${formatTime(place.admitted_until ?? "")}: if a seat comes back before then, you can choose it here.`;
      replace(status,
        h("p", { class: "queue-paused" }, "All the seats left are in other buyers' baskets right now."),
        h("p", {}, `Some may come back if those buyers do not pay in time. ${where} Keep this page open; it updates by itself.`));
      return;
    }
    if (place.status === "waiting" && place.paused) {
      replace(status,
        h("p", { class: "queue-position" }, `You are number ${place.position} in the queue.`),
        h("p", { class: "queue-paused" }, "The organizer has paused the sale for a moment."),
        h("p", {}, "You keep your place, and nobody moves ahead of you. Keep this page open; it goes on by itself when the sale does."));
      return;
    }
    if (place.status === "waiting") {
      replace(status,
        h("p", { class: "queue-position" }, `You are number ${place.position} in the queue.`),
        h("p", {}, `Estimated wait: ${formatWait(place.estimated_wait_seconds ?? 0)}. Keep this page open; it updates by itself.`));
      return;
    }
    // Admitted: how long the admission lasts, counted down (not live: a
    // countdown read out every second would drown everything else).
    const until = Date.parse(place.admitted_until ?? "");
    const left = h("span", { role: "timer", "aria-live": "off" });
    const tick = () => {
      const ms = until - Date.now();
      left.textContent = formatClock(ms);
      if (ms <= 0) {
        clearInterval(timer);
        recheck().catch(report);
      }
    };
    replace(status,
      h("p", { class: "queue-admitted" }, "It is your turn: choose your seats below."),
      h("p", {}, `You can hold seats until ${formatTime(place.admitted_until ?? "")} (`, left, " left)."));
    tick();
    timer = setInterval(tick, 1000);
  }

  /**
   * Keeps the answer's queue token for the next poll.
   * @param {QueueStatus | null} place
   * @returns {QueueStatus | null}
   */
  function remember(place) {
    token = place?.queue_token ?? null;
    return place;
  }

  /**
   * GET the buyer's place: null when not in the queue (404).
   * @returns {Promise<QueueStatus | null>}
   */
  async function fetchPlace() {
    try {
      return remember(await retrying(() => get(path, {
        signal, headers: token ? { "Queue-Token": token } : {},
      }), signal));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return remember(null);
      if (err instanceof ApiError && err.slug === "invalid-queue-token" && token) {
        token = null; // expired (or from before a restart of the sale): ask without it
        return fetchPlace();
      }
      throw err;
    }
  }

  /**
   * Whether the answer may still change by itself: waiting, or closed for now.
   * @param {QueueStatus} place
   * @returns {boolean}
   */
  function pending(place) {
    return (place.status === "waiting" || (place.status === "closed" && place.closed_reason === "seats_held"));
  }

  /**
   * Follows a place: polls while waiting, tells the page when admitted or not.
   * @param {QueueStatus | null} place
   */
  async function follow(place) {
    const mine = ++generation;
    let interval = FIRST_POLL_MS;
    while (place && pending(place)) {
      show(place);
      onLapsed();
      // Sooner when the estimate says the turn is near, never under 1 s.
      const estimate = place.paused ? PAUSED_POLL_MS : (place.estimated_wait_seconds ?? Infinity) * 1000;
      await sleep(Math.max(FIRST_POLL_MS, Math.min(interval, estimate)), signal);
      if (mine !== generation) return;
      interval = Math.min(MAX_POLL_MS, interval * 2);
      place = await fetchPlace();
      if (mine !== generation) return;
    }
    show(place);
    if (place?.status === "admitted") onAdmitted(new Date(place.admitted_until ?? ""));
    else onLapsed();
  }

  /** @param {HTMLButtonElement} button */
  async function joinQueue(button) {
    button.disabled = true;
    try {
      // Joining again keeps one's place, so retrying a refusal is safe.
      /** @type {import("./api.js").Answer<QueueStatus>} */
      const { data } = await retrying(() => api("POST", path, { signal }), signal);
      await follow(remember(data));
    } finally {
      button.disabled = false;
    }
  }

  /**
   * Asks the server again where the buyer stands (after a 403 not-admitted, or
   * when the admission ends): without the token, so that the room itself answers.
   */
  async function recheck() {
    token = null;
    await follow(await fetchPlace());
  }

  return { element, start: recheck, recheck };
}
