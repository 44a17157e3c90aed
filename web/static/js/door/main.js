// The door page (/door): a door person scans tickets with this device's
// scanner key. Online, each scan asks the server (POST /v1/scans); when the
// server cannot be reached, signed codes are checked on the device (offline.js)
// and the admissions queued, then uploaded when the network is back
// (POST /v1/scans/batch), where the earliest admission of a ticket wins.
// When the organizer revokes this device's key, the page says so, admits no
// one, uploads what the server still takes (the scans made before the
// revocation) and lists the rest, and can be signed out.

import { startCamera } from "./camera.js";
import { signal } from "./feedback.js";
import { DeviceState, decideOffline, parseSigned } from "./offline.js";
import { Server, Unreachable } from "./server.js";

const KEY = "stagedoor.door.key";
const SYNC_EVERY_MS = 5000;
const $ = (id) => document.getElementById(id);

let server = null;
let state = null;
let online = true;
let syncing = false;
let stopCamera = null;
const retrying = new Set(); // codes waiting for their Retry-After

/** Scan → verdict on screen, in ms, for each scan (the browser tests read it). */
window.doorTimings = [];

const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const shortId = (id) => (id ? id.slice(0, 8) : "");

// --- verdicts ------------------------------------------------------------------

/** What an online answer means at the door. */
function verdictOf(answer, code) {
  const b = answer.body ?? {};
  switch (answer.status) {
    case 200:
      state.admitted[b.ticket_id] = b.scanned_at;
      return { kind: "admitted", word: "Admitted", detail: `${b.seat.section} · row ${b.seat.row} · seat ${b.seat.number}` };
    case 400:
      return { kind: "refused", word: "Not a ticket", detail: b.detail ?? "this is not a ticket code" };
    case 401:
      keyRevoked();
      return { kind: "refused", word: "Key revoked", detail: REVOKED_DETAIL };
    case 429:
    case 503:
      retryLater(code, answer.retryAfterMs || 1000);
      return { kind: "wait", word: "Wait", detail: `the server is busy: this scan is retried by itself in ${Math.ceil((answer.retryAfterMs || 1000) / 1000)} s` };
  }
  switch (b.result) {
    case "already_scanned":
      return { kind: "already", word: "Already scanned", detail: `at ${clock(b.first_scanned_at)}` };
    case "wrong_event":
      return { kind: "refused", word: "Wrong event", detail: "this ticket is for another event" };
    case "revoked":
      return { kind: "refused", word: "Revoked", detail: "the organizer revoked this ticket" };
    case "invalid":
      return { kind: "refused", word: "Invalid", detail: "no ticket has this code" };
  }
  return { kind: "refused", word: `Error ${answer.status}`, detail: b.detail ?? "unexpected answer" };
}

/** Decides a scan on the device, queuing it for upload. */
async function verdictOffline(code) {
  const d = await decideOffline(state, code);
  const now = new Date().toISOString();
  const queue = (offline) => state.queue.push({ device_scan_id: crypto.randomUUID(), code, scanned_at: now, offline });
  switch (d.result) {
    case "admitted":
      state.admitted[d.ticketId] = now;
      queue(true);
      return { kind: "admitted", word: "Admitted", detail: `ticket ${shortId(d.ticketId)}`, offline: true };
    case "already_scanned":
      return { kind: "already", word: "Already scanned", detail: `at ${clock(d.firstScannedAt)} on this device`, offline: true };
    case "unverifiable":
      queue(false);
      return { kind: "refused", word: "Cannot check offline", detail: "not a signed ticket: check it by hand; it is queued", offline: true };
    case "wrong_event":
      return { kind: "refused", word: "Wrong event", detail: "not a ticket this device admits", offline: true };
    case "revoked":
      return { kind: "refused", word: "Revoked", detail: "the organizer revoked this ticket", offline: true };
    default:
      return { kind: "refused", word: "Invalid", detail: "the code's signature is wrong", offline: true };
  }
}

const REVOKED_DETAIL = "the organizer revoked this device's scanner key: it admits no one; sign out and set up a new key";

async function scan(code) {
  code = code.trim();
  if (!code) return;
  const started = performance.now();
  let verdict;
  if (state.keyRevokedAt) {
    verdict = { kind: "refused", word: "Key revoked", detail: REVOKED_DETAIL };
  } else if (online && navigator.onLine !== false) {
    try {
      verdict = verdictOf(await server.scan(code), code);
    } catch (err) {
      if (!(err instanceof Unreachable)) throw err;
      setOnline(false);
    }
  }
  verdict ??= await verdictOffline(code);
  show(verdict, code);
  window.doorTimings.push(performance.now() - started);
}

/** Tries a scan again after the wait the server asked for, once. */
function retryLater(code, ms) {
  if (retrying.has(code)) return;
  retrying.add(code);
  setTimeout(() => {
    retrying.delete(code);
    scan(code);
  }, ms);
}

// --- the screen ------------------------------------------------------------------

let freshTimer;

function show(verdict, code) {
  const box = $("verdict");
  const kindClass = { admitted: "verdict-admitted", already: "verdict-already", refused: "verdict-refused", wait: "verdict-wait" }[verdict.kind];
  box.className = `verdict ${kindClass} is-fresh`;
  box.dataset.kind = verdict.kind;
  box.querySelector(".verdict-word").textContent = verdict.word;
  box.querySelector(".verdict-detail").textContent = verdict.detail + (verdict.offline ? " · offline" : "");
  clearTimeout(freshTimer);
  freshTimer = setTimeout(() => box.classList.remove("is-fresh"), 1200);
  signal(verdict.kind);
  state.remember({ at: new Date().toISOString(), kind: verdict.kind, word: verdict.word, detail: verdict.detail, code: code.slice(0, 6), offline: !!verdict.offline });
  render();
  $("code").focus();
}

function render() {
  renderRevoked();
  $("count-admitted").textContent = state.counts.admitted;
  $("count-refused").textContent = state.counts.refused;
  $("count-queued").textContent = state.queue.length;
  const list = $("history");
  list.replaceChildren(
    ...state.history.map((h) => {
      const li = document.createElement("li");
      const result = document.createElement("span");
      result.className = "result";
      result.textContent = h.word;
      li.append(`${clock(h.at)} · `, result, ` · ${h.detail} · ${h.code}…`);
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
      : `Offline: checking signed tickets on this device · ${state.queue.length} to sync`;
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
    verdict.querySelector(".verdict-word").textContent = "Key revoked";
    verdict.querySelector(".verdict-detail").textContent = REVOKED_DETAIL;
  }
  const lost = state.notUploaded;
  $("revoked-lost").textContent = lost.length === 1
    ? "1 scan could not be uploaded: it was made after the key was revoked, so Stagedoor does not take it. Write it down for the organizer before you sign out:"
    : lost.length
      ? `${lost.length} scans could not be uploaded: they were made after the key was revoked, so Stagedoor does not take them. Write them down for the organizer before you sign out:`
      : state.queue.length
      ? `${state.queue.length} scans made before the revocation still wait to upload; keep this device connected.`
      : "Every scan this device made before the revocation was uploaded.";
  $("revoked-list").replaceChildren(
    ...lost.map((s) => {
      const li = document.createElement("li");
      const signed = parseSigned(s.code);
      const what = signed ? `ticket ${shortId(signed.ticketId)}` : `code ${s.code.slice(0, 6)}…`;
      li.textContent = `${clock(s.scanned_at)} · ${what} · ${s.offline ? "admitted offline" : "not checked"}`;
      return li;
    }),
  );
}

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
    if (keys.status === 401) {
      keyRevoked();
    } else if (keys.status === 200) {
      state.boundEvent = keys.body.event_id;
      state.keys = Object.fromEntries(keys.body.keys.map((k) => [k.event_id, k.public_key]));
    }
    while (!state.keyRevokedAt) {
      const r = await server.revocations(state.revokedAfter);
      if (r.status !== 200 || r.body.revocations.length === 0) break;
      for (const v of r.body.revocations) state.revoked[v.ticket_id] = true;
      state.revokedAfter = r.body.next_after;
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
      if (up.status !== 200) break; // 429 or 503: the next sync tries again
      const done = new Set(up.body.results.map((r) => r.device_scan_id));
      const refused = new Set(up.body.results.filter((r) => r.result === "key_revoked").map((r) => r.device_scan_id));
      const conflicts = up.body.results.filter((r) => r.result === "conflict").length;
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

// --- set up ----------------------------------------------------------------------

function start(key) {
  server = new Server(key);
  state = new DeviceState();
  $("setup").hidden = true;
  $("scanning").hidden = false;
  render();
  sync();
  setInterval(sync, SYNC_EVERY_MS);
  addEventListener("online", sync);
  $("code").focus();
}

$("setup-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("setup-key").value.trim();
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
  const input = $("code");
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
    stopCamera = await startCamera($("camera"), scan);
    button.textContent = "Stop the camera";
  } catch (err) {
    $("camera-error").textContent = `The camera cannot be used: ${err.message}`;
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
else $("setup").hidden = false;
