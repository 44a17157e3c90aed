// The door page (/door): a door person scans tickets with this device's
// scanner key. Online, each scan asks the server (POST /v1/scans); when the
// server cannot be reached, signed codes are checked on the device (offline.js)
// and the admissions queued, then uploaded when the network is back
// (POST /v1/scans/batch), where the earliest admission of a ticket wins.
// A ticket's short reference can be typed instead of its code: online the
// server looks it up; offline it is checked against the list of the event's
// tickets that admit, synced every minute (GET /v1/scanner/tickets).
// When the organizer revokes this device's key, the page says so, admits no
// one, uploads what the server still takes (the scans made before the
// revocation) and lists the rest, and can be signed out.

import { byId } from "../dom.js";
import { errorText } from "../notice.js";
import { startCamera } from "./camera.js";
import { signal } from "./feedback.js";
import { DeviceState, decideOffline, parseSigned } from "./offline.js";
import { Server, Unreachable } from "./server.js";
import { normalizeReference, showReference } from "../reference.js";
import {
  clock, KEY_REVOKED, LastScan, offlineVerdict, onlineVerdict, REVOKED_DETAIL, retryWait, revokedNotice, seatWords, shortId, shownDetail,
} from "./verdicts.js";

/** @typedef {import("./verdicts.js").Verdict} Verdict */

const KEY = "stagedoor.door.key";
const SYNC_EVERY_MS = 5000;
/** How often the list of tickets and references is read again whole. */
const LIST_EVERY_MS = 60_000;
const $ = byId;

/** @type {Server | null} */
let server = null;
/** @type {DeviceState} */
let state;
let online = true;
let syncing = false;
/** @type {(() => void) | null} */
let stopCamera = null;
/** @type {Set<string>} codes waiting for their Retry-After */
const retrying = new Set();
/** The last code and its verdict, shown again when it is read again soon. */
const lastScan = new LastScan();

/** @type {Map<string, string> | null} ticket id → its reference, from the synced list (built when needed) */
let referenceOfTicket = null;

/**
 * A ticket's reference and seat in words, for the list of last scans, from
 * the synced list ("" when it is not on it).
 * @param {string | null | undefined} ticketId
 * @returns {string}
 */
function ticketLabel(ticketId) {
  if (!ticketId) return "";
  referenceOfTicket ??= new Map(Object.entries(state.references).map(([ref, t]) => [t.ticket_id, ref]));
  const ref = referenceOfTicket.get(ticketId);
  return ref ? `${showReference(ref)} · ${seatWords(state.references[ref].seat)}` : "";
}

/** Scan → verdict on screen, in ms, for each scan (the browser tests read it). */
window.doorTimings = [];

// --- verdicts ------------------------------------------------------------------

/**
 * What an online answer means at the door, doing what it asks: an admission
 * is remembered, a refused key revokes this device, a busy server's scan is
 * tried again after the wait it asked for.
 * @param {import("./server.js").Answer<import("../types.js").Admission>} answer
 * @param {string} code
 * @returns {Verdict}
 */
function verdictOf(answer, code) {
  const admission = answer.ok;
  if (answer.status === 200 && admission) state.admitted[admission.ticket_id] = admission.scanned_at;
  else if (answer.status === 401) keyRevoked();
  else if (answer.status === 429 || answer.status === 503) retryLater(code, retryWait(answer));
  const verdict = onlineVerdict(answer);
  verdict.ticket = admission ? `${showReference(admission.reference)} · ${seatWords(admission.seat)}` : ticketLabel(answer.problem.ticket_id);
  return verdict;
}

/**
 * Decides a scan on the device, queuing it for upload.
 * @param {string} code
 * @returns {Promise<Verdict>}
 */
async function verdictOffline(code) {
  const d = await decideOffline(state, code);
  const now = new Date().toISOString();
  /** @param {boolean} offline admitted on the device */
  const queue = (offline) => state.queue.push({ device_scan_id: crypto.randomUUID(), code, scanned_at: now, offline });
  if (d.result === "admitted" && d.ticketId) {
    state.admitted[d.ticketId] = now;
    queue(true);
  } else if (d.result === "unverifiable") queue(false);
  const verdict = offlineVerdict(d);
  verdict.ticket = ticketLabel(d.ticketId);
  return verdict;
}

/** @param {string} code */
async function scan(code) {
  // A typed reference, as the one it means: read again, queued and uploaded so.
  code = normalizeReference(code) ?? code.trim();
  if (!code) return;
  const started = performance.now();
  /** @type {Verdict | undefined} */
  let verdict = state.keyRevokedAt ? KEY_REVOKED : lastScan.again(code, Date.now()) ?? undefined;
  if (!verdict && server && online && navigator.onLine !== false) {
    try {
      verdict = verdictOf(await server.scan(code), code);
    } catch (err) {
      if (!(err instanceof Unreachable)) throw err;
      setOnline(false);
    }
  }
  verdict ??= await verdictOffline(code);
  if (!verdict.again) lastScan.remember(code, verdict, Date.now());
  show(verdict, code);
  window.doorTimings.push(performance.now() - started);
}

/**
 * Tries a scan again after the wait the server asked for, once.
 * @param {string} code
 * @param {number} ms
 */
function retryLater(code, ms) {
  if (retrying.has(code)) return;
  retrying.add(code);
  setTimeout(() => {
    retrying.delete(code);
    scan(code);
  }, ms);
}

// --- the screen ------------------------------------------------------------------

/** @type {ReturnType<typeof setTimeout> | undefined} */
let freshTimer;

/**
 * Writes a verdict's word and detail into the verdict box.
 * @param {HTMLElement} box
 * @param {string} word
 * @param {string} detail
 */
function writeVerdict(box, word, detail) {
  for (const [selector, text] of [[".verdict-word", word], [".verdict-detail", detail]]) {
    const el = box.querySelector(selector);
    if (el) el.textContent = text;
  }
}

/**
 * Shows the verdict of a scan, sounds it and records it; a code read again
 * (verdict.again) is shown again only: it was sounded, counted and listed
 * the first time.
 * @param {Verdict} verdict
 * @param {string} code
 */
function show(verdict, code) {
  const box = $("verdict");
  box.className = `verdict verdict-${verdict.kind} is-fresh`;
  box.dataset.kind = verdict.kind;
  writeVerdict(box, verdict.word, shownDetail(verdict));
  clearTimeout(freshTimer);
  freshTimer = setTimeout(() => box.classList.remove("is-fresh"), 1200);
  if (!verdict.again) {
    signal(verdict.kind);
    state.remember({
      at: new Date().toISOString(), kind: verdict.kind, word: verdict.word, detail: verdict.detail,
      code: verdict.ticket ? "" : code.slice(0, 6), ticket: verdict.ticket || undefined, offline: !!verdict.offline,
    });
  }
  render();
  focusCode();
}

/** Whether this is a touch device (a phone, a tablet), where a focused field opens the keyboard. */
const touchDevice = () => matchMedia("(pointer: coarse)").matches;

/**
 * Puts the focus in the code field, ready for a keyboard-wedge scanner's
 * next code; not on a touch device, where the keyboard it opens would cover
 * the camera and the verdict: there the field is focused by a tap, and keeps
 * the focus from one typed code to the next.
 */
function focusCode() {
  if (!touchDevice()) $("code").focus();
}

function render() {
  renderRevoked();
  $("count-admitted").textContent = String(state.counts.admitted);
  $("count-refused").textContent = String(state.counts.refused);
  $("count-queued").textContent = String(state.queue.length);
  const list = $("history");
  list.replaceChildren(
    ...state.history.map((h) => {
      const li = document.createElement("li");
      const result = document.createElement("span");
      result.className = "result";
      result.textContent = h.word;
      li.append(`${clock(h.at)} · `, result);
      if (h.ticket) {
        // Its reference (kept on one line), then its seat.
        const [ref, ...seat] = h.ticket.split(" · ");
        const code = document.createElement("span");
        code.className = "reference";
        code.textContent = ref;
        li.append(" · ", code, seat.length ? ` · ${seat.join(" · ")}` : "");
      } else li.append(` · ${h.detail} · ${h.code}…`);
      if (h.offline) {
        const tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = "offline";
        li.append(tag);
      }
      return li;
    }),
  );
  const net = $("network");
  net.classList.toggle("is-offline", !online && !state.keyRevokedAt);
  net.classList.toggle("is-revoked", !!state.keyRevokedAt);
  if (state.keyRevokedAt) {
    net.textContent = `Key revoked: admits no one${state.queue.length ? ` · ${state.queue.length} to upload` : ""}`;
  } else {
    net.textContent = online
      ? `Online${state.syncedAt ? ` · synced ${clock(state.syncedAt)}` : ""}`
      : `Offline: checking tickets on this device · ${state.queue.length} to sync`;
  }
}

/** The notice of a revoked key, with the scans the server would not take. */
function renderRevoked() {
  const box = $("revoked");
  box.hidden = !state.keyRevokedAt;
  if (!state.keyRevokedAt) return;
  const verdict = $("verdict");
  if (verdict.classList.contains("verdict-ready")) {
    // Not "Ready" on a device that admits no one (a reload keeps the state).
    verdict.className = "verdict verdict-refused";
    verdict.dataset.kind = "refused";
    writeVerdict(verdict, "Key revoked", REVOKED_DETAIL);
  }
  const lost = state.notUploaded;
  $("revoked-lost").textContent = revokedNotice(lost.length, state.queue.length);
  $("revoked-list").replaceChildren(
    ...lost.map((s) => {
      const li = document.createElement("li");
      const signed = parseSigned(s.code);
      const ref = normalizeReference(s.code);
      const what = signed ? `ticket ${shortId(signed.ticketId)}` : ref ? `reference ${showReference(ref)}` : `code ${s.code.slice(0, 6)}…`;
      li.textContent = `${clock(s.scanned_at)} · ${what} · ${s.offline ? "admitted offline" : "not checked"}`;
      return li;
    }),
  );
}

/** @param {boolean} value */
function setOnline(value) {
  if (online === value) return;
  online = value;
  render();
}

// --- sync ------------------------------------------------------------------------

/** The server refused this device's key: from now on it admits no one. */
function keyRevoked() {
  if (state.keyRevokedAt) return;
  state.keyRevokedAt = new Date().toISOString();
  state.save();
  render();
  setTimeout(sync); // upload what the server still takes
}

/** Fetches the keys and revocations, and uploads the queue. */
async function sync() {
  if (syncing || !server || (state.keyRevokedAt && !state.queue.length)) return;
  syncing = true;
  try {
    const keys = await server.keyset();
    const keyset = keys.ok;
    if (keys.status === 401) {
      keyRevoked();
    } else if (keys.status === 200 && keyset) {
      state.boundEvent = keyset.event_id;
      state.keys = Object.fromEntries(keyset.keys.map((k) => [k.event_id, k.public_key]));
    }
    while (!state.keyRevokedAt) {
      const r = (await server.revocations(state.revokedAfter)).ok;
      if (!r || r.revocations.length === 0) break;
      for (const v of r.revocations) state.revoked[v.ticket_id] = true;
      state.revokedAfter = r.next_after;
    }
    if (!state.keyRevokedAt && (!state.referencesAt || Date.now() - Date.parse(state.referencesAt) >= LIST_EVERY_MS)) {
      await syncList();
    }
    while (state.queue.length) {
      const batch = state.queue.slice(0, 200);
      const up = await server.upload(batch);
      if (up.status === 401) {
        // Not even a revoked key the server knows: it takes none of these.
        keyRevoked();
        state.notUploaded.push(...state.queue);
        state.queue = [];
        break;
      }
      const results = up.status === 200 ? up.ok?.results : undefined;
      if (!results) break; // 429 or 503: the next sync tries again
      const done = new Set(results.map((r) => r.device_scan_id));
      const refused = new Set(results.filter((r) => r.result === "key_revoked").map((r) => r.device_scan_id));
      const conflicts = results.filter((r) => r.result === "conflict").length;
      state.notUploaded.push(...state.queue.filter((s) => refused.has(s.device_scan_id)));
      state.queue = state.queue.filter((s) => !done.has(s.device_scan_id));
      if (conflicts) state.remember({ at: new Date().toISOString(), kind: "wait", word: "Synced", detail: `${conflicts} admitted elsewhere first`, code: "", offline: false });
      if (done.size < batch.length) break; // the key's limit ran out: the rest at the next sync
    }
    state.syncedAt = new Date().toISOString();
    setOnline(true);
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    setOnline(false);
  } finally {
    syncing = false;
    state.save();
    render();
  }
}

/**
 * Reads the whole list of the tickets that admit, with their references, a
 * page at a time, and replaces the device's once it has it all.
 */
async function syncList() {
  if (!server) return;
  /** @type {typeof state.references} */
  const list = {};
  let after = "";
  for (;;) {
    const page = (await server.tickets(after)).ok;
    if (!page) return; // refused for now: the next sync tries again
    if (page.tickets.length === 0) break;
    for (const t of page.tickets) list[t.reference] = { ticket_id: t.ticket_id, event_id: t.event_id, seat: t.seat };
    after = page.next_after;
  }
  state.references = list;
  state.referencesAt = new Date().toISOString();
  referenceOfTicket = null;
}

// --- set up ----------------------------------------------------------------------

/** @param {string} key the scanner key */
function start(key) {
  server = new Server(key);
  state = new DeviceState();
  $("setup").hidden = true;
  $("scanning").hidden = false;
  render();
  sync();
  setInterval(sync, SYNC_EVERY_MS);
  addEventListener("online", sync);
  focusCode();
}

$("setup-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("setup-key", HTMLInputElement).value.trim();
  try {
    const answer = await new Server(key).keyset();
    if (answer.status === 401) {
      $("setup-error").textContent = "This is not a valid scanner key (or it was revoked).";
      return;
    }
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err; // offline: kept, checked at the next sync
  }
  localStorage.setItem(KEY, key);
  start(key);
});

$("scan-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("code", HTMLInputElement);
  const code = input.value;
  input.value = "";
  scan(code);
});

$("camera-toggle").addEventListener("click", async () => {
  const button = $("camera-toggle");
  $("camera-error").textContent = "";
  if (stopCamera) {
    stopCamera();
    stopCamera = null;
    button.textContent = "Use the camera";
    return;
  }
  try {
    stopCamera = await startCamera($("camera", HTMLVideoElement), scan);
    button.textContent = "Stop the camera";
    if (touchDevice()) $("code").blur(); // the keyboard closes: the camera is what is used
  } catch (err) {
    $("camera-error").textContent = `The camera cannot be used: ${errorText(err)}`;
  }
});

$("sign-out").addEventListener("click", () => {
  if (state.queue.length) {
    $("camera-error").textContent = `${state.queue.length} scans still wait to sync: connect to the network first.`;
    return;
  }
  localStorage.removeItem(KEY);
  state.clear();
  location.reload();
});

const saved = localStorage.getItem(KEY);
if (saved) start(saved);
else {
  $("setup").hidden = false;
  $("network").textContent = "Not set up";
}
