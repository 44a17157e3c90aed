// The organizer's dashboard of one event: its sales at a glance (GET
// /v1/organizer/events/{id}/sales): tickets sold and held, revenue, orders,
// check-ins, each section's figures, and the seat map, read-only.
//
// Live: the figures are asked again every POLL_MS while the page is visible
// (and at once when it becomes visible again). The seat map follows the seat
// stream the buyers' page uses (seatstream.js), and a change it reports asks
// for the figures soon after, so a sale shows within a moment. The figures
// are not derived from the stream: it says which seats changed, not the
// money, the orders or the door.

import { get } from "../api.js";
import { salesFigures } from "../dashboard-words.js";
import { h, onAbort, replace, sleep, uid } from "../dom.js";
import { formatMoney, formatTime } from "../format.js";
import { SeatMap, STATUS_WORDS } from "../seatmap.js";
import { watchSeats } from "../seatstream.js";

/** @typedef {import("../types.js").EventSales} EventSales */

// How often the figures are asked for while the page is visible.
const POLL_MS = 4000;
// How soon after a seat changed on the stream the figures are asked for.
const AFTER_CHANGE_MS = 300;

const COLUMNS = ["Section", "Price", "Sold", "Held", "Available", "Revenue"];

/**
 * The dashboard of the event, kept up to date until signal aborts.
 * @param {import("../types.js").OrganizerEvent} event
 * @param {AbortSignal} signal
 * @returns {HTMLElement}
 */
export function salesPanel(event, signal) {
  const headingId = uid("h");
  /** @type {Record<string, {value: HTMLElement, note: HTMLElement}>} */
  const tiles = {};
  /**
   * @param {string} key
   * @param {string} label
   */
  const tile = (key, label) => {
    const value = h("dd", { class: "dash-value" }, "…");
    const note = h("dd", { class: "dash-note muted" }, "\u00a0");
    tiles[key] = { value, note };
    return h("div", { class: "dash-tile", "data-figure": key }, h("dt", {}, label), value, note);
  };
  const figures = h("dl", { class: "dash-figures" },
    tile("revenue", "Revenue"), tile("sold", "Tickets sold"), tile("orders", "Paid orders"),
    tile("check-ins", "Checked in"), tile("held", "Held now"));
  const rows = h("tbody", { role: "rowgroup" });
  const sections = h("table", { class: "stacked dash-sections", role: "table" },
    h("caption", { class: "visually-hidden" }, "Sales by section"),
    h("thead", { role: "rowgroup" }, h("tr", { role: "row" }, COLUMNS.map((c, i) => h("th", { scope: "col", role: "columnheader", class: i > 0 ? "num" : null }, c)))),
    rows);
  const updated = h("p", { class: "muted dash-updated" }, "Reading the sales…");
  const seated = (event.sections ?? []).some((s) => !s.general_admission);
  const mapHeadingId = uid("h");
  const map = new SeatMap({ currency: event.currency, readOnly: true });
  const mapSection = seated ? h("section", { class: "dash-map", "aria-labelledby": mapHeadingId },
    h("h3", { id: mapHeadingId }, "Seat map"),
    h("p", { class: "hint" }, "Sold and held seats, as buyers see them now. Nothing can be chosen here."),
    legend(), map.frame) : null;

  // data-status: the event's (organizer-event.js sets it on a change); a
  // cancelled event's map is not shown, its seats being on sale no more.
  const panel = h("section", { class: "dash", "data-status": event.status, "aria-labelledby": headingId },
    h("h2", { id: headingId }, "Sales"), figures, updated,
    h("h3", {}, "By section"), sections, mapSection);

  /** @param {EventSales} s */
  const show = (s) => {
    const money = (/** @type {number} */ c) => formatMoney(c, s.currency);
    for (const [key, figure] of Object.entries(salesFigures(s, panel.dataset.status === "cancelled"))) {
      tiles[key].value.textContent = figure.value;
      tiles[key].note.textContent = figure.note || "\u00a0";
    }
    replace(rows, s.sections.map((sec) => sectionRow(sec, money)));
    updated.textContent = `Updated ${formatTime(new Date().toISOString())}. Updates by itself every few seconds.`;
  };

  // --- Keeping up -------------------------------------------------------------
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let soon;
  let reading = false;
  const refresh = async () => {
    if (stopped || reading) return;
    reading = true;
    try {
      show(await get(`/v1/organizer/events/${encodeURIComponent(event.id)}/sales`, { signal }));
    } catch {
      if (!signal.aborted) updated.textContent = "The sales could not be read just now; trying again in a moment.";
    } finally {
      reading = false;
    }
  };
  const onVisible = () => { if (document.visibilityState === "visible") refresh(); };
  document.addEventListener("visibilitychange", onVisible);
  onAbort(signal, () => {
    stopped = true;
    clearTimeout(soon);
    document.removeEventListener("visibilitychange", onVisible);
  });
  (async () => {
    await refresh();
    while (!stopped) {
      try {
        await sleep(POLL_MS, signal);
      } catch {
        return;
      }
      if (document.visibilityState === "visible") await refresh();
    }
  })();
  if (seated) {
    watchSeats(event.id, {
      snapshot: (m) => { map.setSeats(m.seats); },
      changes: (m) => {
        map.applyChanges(m.seats);
        clearTimeout(soon);
        soon = setTimeout(refresh, AFTER_CHANGE_MS);
      },
      mode: () => {},
      error: () => {},
    }, signal);
  }
  return panel;
}

/**
 * One section's row: its name, price and figures.
 * @param {import("../types.js").SectionSales} sec
 * @param {(cents: number) => string} money
 * @returns {HTMLTableRowElement}
 */
function sectionRow(sec, money) {
  /**
   * @param {number} i the column
   * @param {string} text
   */
  const cell = (i, text) => h("td", { role: "cell", "data-label": COLUMNS[i], class: "num" }, text);
  return h("tr", { role: "row" },
    h("th", { scope: "row", role: "rowheader" }, sec.name,
      sec.general_admission ? h("span", { class: "muted" }, " · general admission") : null),
    cell(1, money(sec.price_cents)),
    cell(2, `${sec.sold} of ${sec.capacity}`),
    cell(3, String(sec.held)),
    cell(4, String(sec.available)),
    cell(5, money(sec.revenue_cents)));
}

/**
 * The map's legend: the statuses an organizer sees.
 * @returns {HTMLUListElement}
 */
function legend() {
  return h("ul", { class: "legend", "aria-label": "Seat statuses" },
    /** @type {const} */ (["available", "held", "sold"]).map((status) =>
      h("li", {}, h("span", { class: `seat seat-${status} swatch`, "aria-hidden": "true" }, "1"), STATUS_WORDS[status])));
}
