// Keeps a seat map up to date. First choice: the server-sent events stream
// GET /v1/events/{id}/seats/stream, whose first message ("snapshot") is the
// whole seat map and whose next ones ("changes") list only the seats whose
// status changed. When the stream breaks, it falls back to polling
// GET /v1/events/{id}/seats every 2 seconds, and tries the stream again every
// 30 seconds (its snapshot makes up for anything missed meanwhile).

import { ApiError, get } from "./api.js";
import { onAbort } from "./dom.js";

const POLL_EVERY_MS = 2000;
const RETRY_STREAM_MS = 30_000;

/**
 * @typedef {object} SeatHandlers
 * @property {(map: import("./types.js").SeatMap) => void} snapshot
 * @property {(map: import("./types.js").SeatChanges) => void} changes
 * @property {(how: "live" | "polling") => void} mode
 * @property {(err: unknown) => void} error
 */

/**
 * Watches the event's seats until signal aborts. handlers:
 *   snapshot(seatMap)  the whole map ({event_id, as_of, seats: [...]})
 *   changes(seatMap)   only changed seats ({event_id, as_of, seats: [{id, status}]})
 *   mode("live" | "polling")  how the map is being kept up to date
 *   error(err)         a poll failed (the next one is tried all the same)
 * @param {string} eventId
 * @param {SeatHandlers} handlers
 * @param {AbortSignal} signal
 */
export function watchSeats(eventId, handlers, signal) {
  /** @type {EventSource | null} */
  let source = null;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let pollTimer = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retryTimer;

  function openStream() {
    clearTimeout(retryTimer);
    source = new EventSource(`/v1/events/${encodeURIComponent(eventId)}/seats/stream`);
    source.addEventListener("snapshot", (e) => {
      stopPolling(); // the stream is back: it alone keeps the map now
      handlers.mode("live");
      handlers.snapshot(JSON.parse(e.data));
    });
    source.addEventListener("changes", (e) => handlers.changes(JSON.parse(e.data)));
    // EventSource would reconnect by itself, but silently and with no map
    // meanwhile: close it and poll instead, then try the stream again later.
    source.addEventListener("error", () => {
      source?.close();
      source = null;
      startPolling();
      retryTimer = setTimeout(openStream, RETRY_STREAM_MS);
    });
  }

  function startPolling() {
    if (pollTimer !== null) return;
    handlers.mode("polling");
    const poll = async () => {
      let wait = POLL_EVERY_MS;
      try {
        handlers.snapshot(await get(`/v1/events/${encodeURIComponent(eventId)}/seats`, { signal }));
      } catch (err) {
        if (signal.aborted) return;
        handlers.error(err);
        // A refusal that says when to come back is obeyed.
        if (err instanceof ApiError && err.retryAfterMs) wait = Math.max(wait, err.retryAfterMs);
      }
      if (pollTimer !== null) pollTimer = setTimeout(poll, wait);
    };
    pollTimer = setTimeout(poll, 0);
  }

  function stopPolling() {
    if (pollTimer !== null) clearTimeout(pollTimer);
    pollTimer = null;
  }

  onAbort(signal, () => {
    source?.close();
    stopPolling();
    clearTimeout(retryTimer);
  });
  openStream();
}
