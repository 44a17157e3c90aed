// Checking tickets without the server: signed codes, the events' public keys,
// the revocations, and what this device admitted. See internal/ticketsign for
// the code's format: "SD1" and the base32 of
//   version (1) ‖ ticket id (16) ‖ event id (16) ‖ Ed25519 signature (64)
// where the signature covers "stagedoor ticket v1\n" and the first 33 bytes.
// 97 bytes take 156 characters whose last one has 4 unused bits: a code is the
// one spelling with those bits zero, and the 15 others are refused, as the
// server refuses them (a respelled code must not pass for its ticket).

const PREFIX = "SD1";
const CONTEXT = new TextEncoder().encode("stagedoor ticket v1\n");
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** MAX_CODE_BYTES bounds a code as the server takes it (scan.MaxCodeBytes). */
const MAX_CODE_BYTES = 256;

/**
 * base32 (RFC 4648, no padding) to bytes, or null, also when the last
 * character's unused bits are not zero (the one canonical spelling only).
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

function uuid(bytes) {
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether the code is meant as a signed one: no older code starts so ("1" is no base32 character). */
export const looksSigned = (code) => code.startsWith(PREFIX);

/** The parts of a signed code, or null when the code is not one (a respelling of one included). */
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

function fromBase64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

const keyCache = new Map(); // event id → CryptoKey

/** Verifies a parsed signed code with its event's public key (base64url). */
export async function verify(parsed, publicKey) {
  let key = keyCache.get(parsed.eventId);
  if (!key) {
    key = await crypto.subtle.importKey("raw", fromBase64url(publicKey), { name: "Ed25519" }, false, ["verify"]);
    keyCache.set(parsed.eventId, key);
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
  constructor(storage = localStorage, name = "stagedoor.door") {
    this.storage = storage;
    this.name = name;
    const saved = JSON.parse(storage.getItem(name) || "{}");
    this.boundEvent = saved.boundEvent ?? null;
    this.keys = saved.keys ?? {}; // event id → public key (base64url)
    this.revoked = saved.revoked ?? {}; // ticket id → true
    this.revokedAfter = saved.revokedAfter ?? "0";
    this.admitted = saved.admitted ?? {}; // ticket id → when this device admitted it
    this.queue = saved.queue ?? []; // scans to upload
    this.history = saved.history ?? []; // the last 20 attempts
    this.counts = saved.counts ?? { admitted: 0, refused: 0 };
    this.syncedAt = saved.syncedAt ?? null;
    // When the server first refused this device's key (it was revoked), and
    // the scans it would not take (made after that): the page lists them.
    this.keyRevokedAt = saved.keyRevokedAt ?? null;
    this.notUploaded = saved.notUploaded ?? [];
  }

  save() {
    const { storage, name, ...state } = this;
    storage.setItem(name, JSON.stringify(state));
  }

  clear() {
    this.storage.removeItem(this.name);
  }

  /** Records an attempt for the list on screen (the 20 latest). */
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
 * ticket's, is invalid.
 */
export async function decideOffline(state, code) {
  // No ticket's code is longer (the server refuses an upload carrying one).
  if (new TextEncoder().encode(code).length > MAX_CODE_BYTES) return { result: "invalid" };
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
