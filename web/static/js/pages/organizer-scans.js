// The scan audit of one event: every attempt at the door (offline ones and
// conflicts included), newest first, a page at a time (GET /v1/events/{id}/scans?before=…; next_before is the
// next, older page's `before`).

import { get, readEvent, retrying } from "../api.js";
import { cards } from "../cards.js";
import { h } from "../dom.js";
import { formatDateTime, formatDateTimeSeconds } from "../format.js";
import { pager } from "../pager.js";
import { showReference } from "../reference.js";
import { seatWords } from "../door/verdicts.js";
import { requireUser, setTitle } from "../router.js";

const PAGE_SIZE = 50;

/** @type {Record<import("../types.js").ScanResult, string>} */
const RESULT_WORDS = {
  admitted: "Admitted",
  already_scanned: "Already scanned",
  wrong_event: "Wrong event",
  invalid: "Not a ticket",
  revoked: "Revoked",
  // A door admitted the ticket offline after it had been admitted earlier
  // elsewhere: someone got in twice.
  conflict: "Conflict: admitted twice",
};

/**
 * How a scan reached the server, in words.
 * @param {import("../types.js").ScanAttempt} s
 * @returns {string}
 */
function how(s) {
  const words = [s.offline ? "offline" : "online"];
  if (s.device_scanned_at) words.push(`the door said ${formatDateTimeSeconds(s.device_scanned_at)}`);
  if (s.uploaded_after_key_revoked) words.push("uploaded after its key was revoked");
  return words.join(" · ");
}

/** @type {import("../router.js").Page} */
export async function scansPage({ main, params, signal }) {
  const heading = setTitle(main, "Scans");
  if (!requireUser(main, "organizer")) return;
  const id = encodeURIComponent(params.id);
  const event = await readEvent(params.id, signal);
  heading.textContent = `Scans of ${event.name}`;
  document.title = `Scans of ${event.name} · Stagedoor`;

  const body = h("tbody");
  const status = h("p", { role: "status", class: "muted" });
  const older = h("button", { type: "button", class: "secondary", hidden: true }, "Older scans");
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  main.append(
    h("p", { class: "lead" }, event.venue, " · ", formatDateTime(event.starts_at)),
    h("div", { class: "actions" }, refresh),
    h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Scans, scrollable" },
      cards(h("table", {},
        h("caption", { class: "visually-hidden" }, "Every scan attempt, newest first"),
        h("thead", {}, h("tr", {}, ["Time", "Result", "Ticket", "Scanner", "How"].map((t) => h("th", { scope: "col" }, t)))),
        body))),
    status, older);

  const first = pager({
    body, older, refresh, status,
    read: async (before) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (before) query.set("before", before);
      /** @type {import("../types.js").ScanPage} */
      const page = await retrying(() => get(`/v1/events/${id}/scans?${query}`, { signal }), signal);
      return { items: page.scans, next: page.next_before };
    },
    row: (s) => h("tr", {},
      h("td", {}, h("time", { datetime: s.scanned_at }, formatDateTimeSeconds(s.scanned_at))),
      h("td", { class: `result result-${s.result}` }, RESULT_WORDS[s.result] || s.result),
      // The ticket by its reference and seat; a code of no ticket by its first characters.
      h("td", {}, ...(s.reference ? [h("code", { class: "reference" }, showReference(s.reference)), ` · ${seatWords(s.seat)}`] : [h("code", {}, `${s.code_prefix}…`)])),
      h("td", {}, s.scanner_label),
      // Offline: the door checked the ticket alone and uploaded the scan
      // later; its time is the door's clock, unless that could not be true
      // (then the time it arrived, and the door's own is said).
      h("td", {}, how(s))),
    says: (n) => (n === 0 ? "No scans yet." : `${n} scans shown.`),
  });
  await first();
}
