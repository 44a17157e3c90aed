// What the door shows: the verdict of each scan (a kind, a word and a detail)
// from the server's answer or the device's own decision, and the notice of a
// revoked key in words. Pure (no DOM), so Node's tests import it; main.js
// draws it and does what the answer asks (admit, revoke, retry).

import { placeName } from "../places.js";

/** @typedef {"admitted" | "already" | "refused" | "wait"} VerdictKind */

/**
 * @typedef {object} Verdict
 * @property {VerdictKind} kind
 * @property {string} word
 * @property {string} detail
 * @property {boolean} [offline] decided on the device
 * @property {boolean} [again] the last code read again: its verdict shown again (LastScan)
 * @property {string} [ticket] the ticket's reference and seat, for the list of last scans
 */

export const REVOKED_DETAIL = "the organizer revoked this device's scanner key: it admits no one; sign out and set up a new key";

/** The verdict of every scan once the device's key is revoked. */
export const KEY_REVOKED = /** @type {Verdict} */ ({ kind: "refused", word: "Key revoked", detail: REVOKED_DETAIL });

/** A 429's or 503's wait when it named none. */
const DEFAULT_RETRY_MS = 1000;

/**
 * A time of day to the second, in the reader's locale.
 * @param {string} iso
 * @returns {string}
 */
export const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });

/**
 * A ticket id's first 8 characters, enough to tell tickets apart on screen.
 * @param {string | undefined} id
 * @returns {string}
 */
export const shortId = (id) => (id ? id.slice(0, 8) : "");

/**
 * Where a ticket admits, in words: "Floor · row A · seat 3", or its place of
 * general admission.
 * @param {import("../types.js").TicketSeat | undefined | null} seat
 * @returns {string}
 */
export function seatWords(seat) {
  if (!seat) return "";
  return seat.general_admission ? placeName(seat.section) : `${seat.section} · row ${seat.row} · seat ${seat.number}`;
}

/**
 * How long to wait before a scan the server refused for now (429, 503) is
 * tried again: its retryAfterMs, else 1 s.
 * @param {{retryAfterMs: number}} answer
 * @returns {number}
 */
export const retryWait = (answer) => answer.retryAfterMs || DEFAULT_RETRY_MS;

/**
 * What an answer of POST /v1/scans means at the door.
 * @param {import("./server.js").Answer<import("../types.js").Admission>} answer
 * @returns {Verdict}
 */
export function onlineVerdict(answer) {
  const admission = answer.ok;
  const p = answer.problem;
  switch (answer.status) {
    case 200:
      return { kind: "admitted", word: "Admitted", detail: seatWords(admission?.seat) };
    case 400:
      return { kind: "refused", word: "Not a ticket", detail: p.detail ?? "this is not a ticket code" };
    case 401:
      return KEY_REVOKED;
    case 429:
    case 503:
      return { kind: "wait", word: "Wait", detail: `the server is busy: this scan is retried by itself in ${Math.ceil(retryWait(answer) / 1000)} s` };
  }
  switch (p.result) {
    case "already_scanned":
      return { kind: "already", word: "Already scanned", detail: `at ${clock(p.first_scanned_at ?? "")}` };
    case "wrong_event":
      return { kind: "refused", word: "Wrong event", detail: "this ticket is for another event" };
    case "revoked":
      return { kind: "refused", word: "Revoked", detail: "the organizer revoked this ticket" };
    case "invalid":
      return { kind: "refused", word: "Invalid", detail: "no ticket has this code" };
  }
  return { kind: "refused", word: `Error ${answer.status}`, detail: p.detail ?? "unexpected answer" };
}

/**
 * How long, in ms, a code read again shows its verdict again instead of being
 * decided anew: a ticket left in front of the camera (read again every 3 s),
 * or scanned twice by a nervous hand, is not "already scanned".
 */
export const AGAIN_MS = 10_000;

/**
 * The last code scanned and its verdict, to show again when the same code is
 * read within AGAIN_MS of its last reading, online and offline alike. Only the
 * last code: once another was scanned, the first one again is a second use.
 */
export class LastScan {
  /** @type {{code: string, verdict: Verdict, at: number} | null} */
  #last = null;

  /**
   * The verdict to show for code read at now (ms): the last code's verdict
   * again, marked again, when code is the last code read less than AGAIN_MS
   * ago (the window then starts anew); else null, and the scan is decided.
   * @param {string} code
   * @param {number} now
   * @returns {Verdict | null}
   */
  again(code, now) {
    const last = this.#last;
    if (!last || last.code !== code || now - last.at >= AGAIN_MS) return null;
    last.at = now;
    return { ...last.verdict, again: true };
  }

  /**
   * Remembers the verdict of code, decided at now (ms). A "wait" is no
   * verdict: the scan is tried again, and decided then.
   * @param {string} code
   * @param {Verdict} verdict
   * @param {number} now
   */
  remember(code, verdict, now) {
    this.#last = verdict.kind === "wait" ? null : { code, verdict, at: now };
  }
}

/**
 * The detail line of a verdict as shown: where it was decided, and "just now"
 * for a code read again.
 * @param {Verdict} verdict
 * @returns {string}
 */
export function shownDetail(verdict) {
  return [verdict.detail, verdict.offline && "offline", verdict.again && "just now"].filter(Boolean).join(" · ");
}

/**
 * What the device's own decision (offline.js) means at the door.
 * @param {import("./offline.js").Decision} d
 * @returns {Verdict}
 */
export function offlineVerdict(d) {
  switch (d.result) {
    case "admitted":
      return { kind: "admitted", word: "Admitted", detail: d.seat ? seatWords(d.seat) : `ticket ${shortId(d.ticketId)}`, offline: true };
    case "already_scanned":
      return { kind: "already", word: "Already scanned", detail: `at ${clock(d.firstScannedAt ?? "")} on this device`, offline: true };
    case "unverifiable":
      return { kind: "refused", word: "Cannot check offline", detail: d.typed
        ? "this reference is not on this device's list: check the ticket by hand; it is queued"
        : "not a signed ticket: check it by hand; it is queued", offline: true };
    case "wrong_event":
      return { kind: "refused", word: "Wrong event", detail: "not a ticket this device admits", offline: true };
    case "revoked":
      return { kind: "refused", word: "Revoked", detail: "the organizer revoked this ticket", offline: true };
    default:
      return { kind: "refused", word: "Invalid", detail: "the code's signature is wrong", offline: true };
  }
}

/**
 * The revoked key's notice: what became of the scans the device still had.
 * @param {number} lost scans the server would not take (made after the revocation)
 * @param {number} queued scans made before it, still to upload
 * @returns {string}
 */
export function revokedNotice(lost, queued) {
  if (lost === 1) {
    return "1 scan could not be uploaded: it was made after the key was revoked, so Stagedoor does not take it. Write it down for the organizer before you sign out:";
  }
  if (lost) {
    return `${lost} scans could not be uploaded: they were made after the key was revoked, so Stagedoor does not take them. Write them down for the organizer before you sign out:`;
  }
  if (queued) return `${queued} scans made before the revocation still wait to upload; keep this device connected.`;
  return "Every scan this device made before the revocation was uploaded.";
}
