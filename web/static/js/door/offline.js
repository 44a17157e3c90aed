// Checking tickets without the server: signed codes, the events' public keys,
// the revocations, and what this device admitted. See internal/ticketsign for
// the code's format: "SD1" and the base32 of
//   version (1) ‖ ticket id (16) ‖ event id (16) ‖ Ed25519 signature (64)
// where the signature covers "stagedoor ticket v1\n" and the first 33 bytes.
// 97 bytes take 156 characters whose last one has 4 unused bits: a code is the
// one spelling with those bits zero, and the 15 others are refused, as the
// server refuses them (a respelled code must not pass for its ticket).
// A ticket's short reference, typed, is checked against the list of the
// tickets that admit (GET /v1/scanner/tickets), read again every minute.

import { normalizeReference } from "../reference.js";

/**
 * @typedef {import("../types.js").QueuedScan} QueuedScan
 * @typedef {import("./verdicts.js").VerdictKind} VerdictKind
 * @typedef {import("../types.js").TicketSeat} TicketSeat
 */

/**
 * A ticket of the list, by its reference.
 * @typedef {{ticket_id: string, event_id: string, seat: TicketSeat}} ListedTicket
 */

/**
 * One attempt as the list on screen shows it.
 * @typedef {object} HistoryEntry
 * @property {string} at
 * @property {VerdictKind} kind
 * @property {string} word
 * @property {string} detail
 * @property {string} code the code's first 6 characters (empty when ticket is set)
 * @property {string} [ticket] the ticket's reference (grouped) and seat, when known
 * @property {boolean} offline
 */

/**
 * What decideOffline() decided.
 * @typedef {object} Decision
 * @property {"admitted" | "already_scanned" | "unverifiable" | "wrong_event" | "revoked" | "invalid"} result
 * @property {string} [ticketId]
 * @property {string} [firstScannedAt] already_scanned: when this device admitted it
 * @property {TicketSeat} [seat] a typed reference's ticket's seat
 * @property {boolean} [typed] the code was a typed reference
 */

const PREFIX = "SD1";
const CONTEXT = new TextEncoder().encode("stagedoor ticket v1\n");
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** MAX_CODE_BYTES bounds a code as the server takes it (scan.MaxCodeBytes). */
const MAX_CODE_BYTES = 256;

/**
 * base32 (RFC 4648, no padding) to bytes, or null, also when the last
 * character's unused bits are not zero (the one canonical spelling only).
 * @param {string} text
 * @returns {Uint8Array<ArrayBuffer> | null}
 */
function base32(text) {
  const out = [];
  let bits = 0, value = 0;
  for (const ch of text) {
    const i = ALPHABET.indexOf(ch);
    if (i < 0) return null;
    value = ((value << 5) | i) & 0xfff; // at most 12 bits are ever pending
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  if (value & ((1 << bits) - 1)) return null;
  return new Uint8Array(out);
}

/**
 * 16 bytes as a UUID's text ("0b6f3a52-9c1e-…").
 * @param {Uint8Array<ArrayBuffer>} bytes
 * @returns {string}
 */
function uuid(bytes) {
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Whether the code is meant as a signed one: no older code starts so ("1" is no base32 character).
 * @param {string} code
 * @returns {boolean}
 */
export const looksSigned = (code) => code.startsWith(PREFIX);

/**
 * What a signed code holds: the signed payload (version, ticket id, event id),
 * the signature, and the two ids as UUIDs.
 * @typedef {object} SignedCode
 * @property {Uint8Array<ArrayBuffer>} payload
 * @property {Uint8Array<ArrayBuffer>} signature
 * @property {string} ticketId
 * @property {string} eventId
 */

/**
 * The parts of a signed code, or null when the code is not one (a respelling of one included).
 * @param {string} code
 * @returns {SignedCode | null}
 */
export function parseSigned(code) {
  if (!code.startsWith(PREFIX)) return null;
  const raw = base32(code.slice(PREFIX.length));
  if (!raw || raw.length !== 97 || raw[0] !== 1) return null;
  return {
    payload: raw.slice(0, 33),
    signature: raw.slice(33),
    ticketId: uuid(raw.slice(1, 17)),
    eventId: uuid(raw.slice(17, 33)),
  };
}

/**
 * @param {string} text base64url, without padding
 * @returns {Uint8Array<ArrayBuffer>}
 */
function fromBase64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/**
 * Public keys imported, by their base64url text (not by event: a key the
 * keyset no longer gives must not verify).
 * @type {Map<string, CryptoKey>}
 */
const keyCache = new Map();

/**
 * Verifies a parsed signed code with its event's public key (base64url).
 * @param {SignedCode} parsed
 * @param {string} publicKey
 * @returns {Promise<boolean>}
 */
export async function verify(parsed, publicKey) {
  let key = keyCache.get(publicKey);
  if (!key) {
    key = await crypto.subtle.importKey("raw", fromBase64url(publicKey), { name: "Ed25519" }, false, ["verify"]);
    keyCache.set(publicKey, key);
  }
  const message = new Uint8Array(CONTEXT.length + parsed.payload.length);
  message.set(CONTEXT);
  message.set(parsed.payload, CONTEXT.length);
  return crypto.subtle.verify({ name: "Ed25519" }, key, parsed.signature, message);
}

/**
 * The device's own state, kept in localStorage so that it survives a reload
 * (and a dead battery): the keys and revocations last synced, the tickets it
 * admitted, and the scans waiting to be uploaded.
 */
export class DeviceState {
  /**
   * @param {Pick<Storage, "getItem" | "setItem" | "removeItem">} [storage]
   * @param {string} [name] the storage's key
   */
  constructor(storage = localStorage, name = "stagedoor.door") {
    this.storage = storage;
    this.name = name;
    const saved = JSON.parse(storage.getItem(name) || "{}");
    /** @type {string | null} the event the scanner key is bound to */
    this.boundEvent = saved.boundEvent ?? null;
    /** @type {Record<string, string>} event id → public key (base64url) */
    this.keys = saved.keys ?? {};
    /** @type {Record<string, true>} ticket id → true */
    this.revoked = saved.revoked ?? {};
    /** @type {Record<string, ListedTicket>} reference → its ticket, that admitted when listed */
    this.references = saved.references ?? {};
    /** @type {string | null} when the list of references was last read whole */
    this.referencesAt = saved.referencesAt ?? null;
    /** @type {string} the revocations' next_after */
    this.revokedAfter = saved.revokedAfter ?? "0";
    /** @type {Record<string, string>} ticket id → when this device (or the server, online) admitted it */
    this.admitted = saved.admitted ?? {};
    /** @type {QueuedScan[]} scans to upload */
    this.queue = saved.queue ?? [];
    /** @type {HistoryEntry[]} the last 20 attempts */
    this.history = saved.history ?? [];
    /** @type {{admitted: number, refused: number}} */
    this.counts = saved.counts ?? { admitted: 0, refused: 0 };
    /** @type {string | null} */
    this.syncedAt = saved.syncedAt ?? null;
    // When the server first refused this device's key (it was revoked), and
    // the scans it would not take (made after that): the page lists them.
    /** @type {string | null} */
    this.keyRevokedAt = saved.keyRevokedAt ?? null;
    /** @type {QueuedScan[]} */
    this.notUploaded = saved.notUploaded ?? [];
  }

  save() {
    const { storage, name, ...state } = this;
    storage.setItem(name, JSON.stringify(state));
  }

  clear() {
    this.storage.removeItem(this.name);
  }

  /**
   * Records an attempt for the list on screen (the 20 latest).
   * @param {HistoryEntry} entry
   */
  remember(entry) {
    this.history.unshift(entry);
    this.history.length = Math.min(this.history.length, 20);
    if (entry.kind === "admitted") this.counts.admitted++;
    else if (entry.kind !== "wait") this.counts.refused++;
    this.save();
  }
}

/**
 * Decides a scan offline: a signed code of an event whose key this device
 * holds, signed right, not revoked and not admitted here before, is admitted
 * (and queued for upload as an offline admission). An unsigned code cannot be
 * checked: it is queued, not admitted. A code that starts as a signed one but
 * is not one as issued (altered, cut, respelled), or one longer than any
 * ticket's, is invalid. A typed reference of a ticket on the synced list (of
 * the device's event) is decided as its signed code would be; one not on the
 * list (a ticket bought since, or no ticket) is queued, not admitted.
 * @param {Pick<DeviceState, "keys" | "boundEvent" | "revoked" | "admitted" | "references">} state
 * @param {string} code
 * @returns {Promise<Decision>}
 */
export async function decideOffline(state, code) {
  // No ticket's code is longer (the server refuses an upload carrying one).
  if (new TextEncoder().encode(code).length > MAX_CODE_BYTES) return { result: "invalid" };
  const ref = normalizeReference(code);
  if (ref) {
    const listed = state.references[ref];
    if (!listed || (state.boundEvent && listed.event_id !== state.boundEvent)) return { result: "unverifiable", typed: true };
    const ticketId = listed.ticket_id, seat = listed.seat;
    if (state.revoked[ticketId]) return { result: "revoked", ticketId, seat };
    const first = state.admitted[ticketId];
    if (first) return { result: "already_scanned", ticketId, firstScannedAt: first, seat };
    return { result: "admitted", ticketId, seat };
  }
  const parsed = parseSigned(code);
  if (!parsed) return { result: looksSigned(code) ? "invalid" : "unverifiable" };
  const key = state.keys[parsed.eventId];
  if (!key || (state.boundEvent && parsed.eventId !== state.boundEvent)) {
    return { result: "wrong_event", ticketId: parsed.ticketId };
  }
  if (!(await verify(parsed, key))) return { result: "invalid" };
  if (state.revoked[parsed.ticketId]) return { result: "revoked", ticketId: parsed.ticketId };
  const before = state.admitted[parsed.ticketId];
  if (before) return { result: "already_scanned", ticketId: parsed.ticketId, firstScannedAt: before };
  return { result: "admitted", ticketId: parsed.ticketId };
}
