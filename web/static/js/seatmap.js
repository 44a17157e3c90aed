// The seat map: every seat of an event drawn by section and row, coloured by
// status, and more than colour: held seats are striped, sold ones struck
// through and dark, chosen ones carry a ✓ and the reader's own held ones a ★
// (see app.css). Each seat is a button whose accessible name says it all:
// "Stalls, row A, seat 1, available, $45.00".
//
// Keyboard: the whole map is one tab stop (a "roving tabindex": only the
// current seat has tabindex 0). Arrow keys move between seats, Home and End to
// a row's ends; Space or Enter chooses a seat or gives it back (the buttons'
// own behaviour); + and − zoom, 0 shows the whole map.
//
// Thumbs: the map fits its box's width at first sight and zooms (pinch, the
// + and − buttons under it) and pans (drag) through one CSS transform
// (seatmap-zoom.js); row letters and the section's name stay at the box's
// left edge while panning. A refused tap is answered beside the seat (a toast
// with a "Log in" link for a reader who is not logged in).
//
// Read-only (the organizer's view, renderSeatMap(…, {readOnly: true})): the
// same map and statuses, seats drawn as images with names, not buttons.

import { h } from "./dom.js";
import { formatMoney } from "./format.js";
import { GEOMETRY, mapSize, ZOOM_STEP, ZoomView } from "./seatmap-zoom.js";

/** @typedef {import("./types.js").Seat} Seat */

/**
 * A seat's status as the reader sees it: the API's, or chosen by them, or in
 * their own hold.
 * @typedef {import("./types.js").SeatStatus | "chosen" | "mine"} SeatLook
 */

/**
 * Words for each status, as read out and shown in the legend.
 * @type {Record<SeatLook, string>}
 */
export const STATUS_WORDS = {
  available: "available",
  chosen: "chosen by you",
  mine: "held by you",
  held: "held",
  sold: "sold",
};

/**
 * @typedef {object} SeatMapOptions
 * @property {string} currency the event's
 * @property {number} [max] most seats one may choose
 * @property {boolean} [readOnly] statuses only, nothing to choose (the organizer's view)
 * @property {(seat: Seat, chosen: boolean) => void} [onToggle] after a seat was chosen or given back
 * @property {() => string | null} [canChoose] null when choosing is allowed, else why not
 * @property {(message: string) => void} [onRefused] a choice that was not allowed (also shown at the seat)
 * @property {string | null} [loginHref] when set, a refusal at the seat offers "Log in" (this link)
 */

export class SeatMap {
  /**
   * The map's element to put in the page is frame (the zoom buttons, the
   * map and its box); element is the map itself (role group, the seats).
   * @param {SeatMapOptions} options
   */
  constructor({ currency, max = 10, readOnly = false, onToggle = () => {}, canChoose = () => null, onRefused = () => {}, loginHref = null }) {
    this.currency = currency;
    this.max = max;
    this.readOnly = readOnly;
    this.onToggle = onToggle;
    this.canChoose = canChoose;
    this.onRefused = onRefused;
    this.loginHref = loginHref;
    /** @type {Map<string, {seat: Seat, button: HTMLElement}>} */
    this.seats = new Map();
    /** @type {HTMLElement[][]} top to bottom, for arrow keys */
    this.rows = [];
    /** @type {Set<string>} ids the reader chose */
    this.chosen = new Set();
    /** @type {Set<string>} ids in the reader's active hold */
    this.mine = new Set();
    /** @type {HTMLElement | null} the button with tabindex 0 */
    this.active = null;

    /** @type {Map<number, string>} prices formatted (money) */
    this.prices = new Map();
    /** @type {{name: string, top: number, bottom: number}[]} sections' vertical extents, natural px */
    this.extents = [];

    this.element = h("div", { class: readOnly ? "seatmap seatmap-readonly" : "seatmap", role: "group", "aria-label": "Seat map" });
    for (const [name, value] of Object.entries(GEOMETRY)) this.element.style.setProperty(`--${name}`, `${value}px`);
    this.element.addEventListener("keydown", (e) => this.onKey(e));
    this.element.addEventListener("click", (e) => this.onClick(e));
    this.element.addEventListener("focusin", (e) => {
      if (e.target instanceof HTMLButtonElement && e.target.matches(".seat")) {
        this.setActive(e.target);
        this.zoom.reveal(e.target);
      }
    });
    this.where = h("p", { class: "seatmap-where", "aria-hidden": "true", hidden: true });
    this.toastText = h("span", {});
    this.toastLink = h("a", { class: "toast-link", hidden: true }, "Log in");
    this.toastEl = h("div", { class: "seatmap-toast", hidden: true }, this.toastText, " ", this.toastLink,
      h("button", { type: "button", class: "toast-close", "aria-label": "Close", onclick: () => this.hideToast() }, "×"));
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.toastTimer = undefined;
    this.box = h("div", { class: "seatmap-view" }, this.element, this.where, this.toastEl);
    this.zoom = new ZoomView(this.box, this.element, () => this.onView());
    const button = (/** @type {string} */ label, /** @type {string} */ text, /** @type {() => void} */ act) =>
      h("button", { type: "button", class: "secondary zoom-button", "aria-label": label, title: label, onclick: act }, text);
    // The zoom buttons sit above the map, in reach whatever its height (a
    // page may put a line of its own before them: controls.prepend).
    this.controls = h("div", { class: "seatmap-controls" },
      h("div", { class: "seatmap-zoom", role: "group", "aria-label": "Zoom" },
        button("Zoom out", "−", () => this.zoom.zoomBy(1 / ZOOM_STEP)),
        button("Zoom in", "+", () => this.zoom.zoomBy(ZOOM_STEP)),
        h("button", { type: "button", class: "secondary zoom-fit", onclick: () => this.zoom.reset() }, "Whole map")));
    this.frame = h("div", { class: "seatmap-frame" }, this.controls, this.box);
  }

  /**
   * Reserves the map's box before its seats arrive (so that the page does not
   * move when they do): its shape from the event's seated sections.
   * @param {{rows?: number, seats_per_row?: number, general_admission?: boolean}[]} sections
   */
  reserve(sections) {
    if (this.seats.size > 0) return;
    this.zoom.setSize(mapSize(sections.filter((s) => !s.general_admission).map((s) => ({ rows: s.rows ?? 0, seats: s.seats_per_row ?? 0 }))));
  }

  /** After a zoom or pan: row letters and section names kept at the box's left, top. */
  onView() {
    const { scale, x, y } = this.zoom.view;
    this.element.style.setProperty("--label-x", `${Math.max(0, -x / scale - GEOMETRY.pad)}px`);
    // The section whose name has scrolled above the box's top is named there.
    const top = -y / scale;
    const current = this.zoom.zoomed() ? this.extents.find((e) => e.top < top && e.bottom > top) : undefined;
    this.where.hidden = !current;
    this.where.textContent = current?.name ?? "";
  }

  /**
   * Shows a short message beside a seat (a refused tap), with "Log in" when
   * the reader is not logged in.
   * @param {string} message
   * @param {HTMLElement} seat
   * @param {boolean} login
   */
  toast(message, seat, login) {
    this.toastText.textContent = message;
    this.toastLink.hidden = !(login && this.loginHref);
    if (this.loginHref) this.toastLink.setAttribute("href", this.loginHref);
    this.toastEl.hidden = false;
    const box = this.box.getBoundingClientRect();
    const at = seat.getBoundingClientRect();
    const w = this.toastEl.offsetWidth;
    const hgt = this.toastEl.offsetHeight;
    const left = Math.min(Math.max(4, at.left - box.left + at.width / 2 - w / 2), box.width - w - 4);
    let top = at.bottom - box.top + 6;
    if (top + hgt > box.height - 4) top = Math.max(4, at.top - box.top - hgt - 6);
    this.toastEl.style.left = `${Math.max(4, left)}px`;
    this.toastEl.style.top = `${top}px`;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => this.hideToast(), login ? 8000 : 4000);
  }

  hideToast() {
    clearTimeout(this.toastTimer);
    this.toastEl.hidden = true;
  }

  /**
   * Draws the map from a full list of seats (GET …/seats, or the stream's
   * snapshot). Returns the seats the reader had chosen that someone else just
   * took (as applyChanges).
   * @param {Seat[]} seats
   * @returns {Seat[]}
   */
  setSeats(seats) {
    if (this.seats.size > 0 && this.sameLayout(seats)) {
      // Same seats as drawn: only statuses change (keeps focus where it is).
      return this.applyChanges(seats);
    }
    this.seats.clear();
    this.rows = [];
    this.extents = [];
    this.element.replaceChildren(h("p", { class: "stage" }, "Stage"));
    const grouped = groupSeats(seats);
    let top = GEOMETRY.pad * 2 + GEOMETRY.stage;
    for (const [section, rows] of grouped) {
      const prices = [...new Set(rows.flatMap(([, r]) => r.map((s) => s.price_cents)))].sort((a, b) => a - b);
      const priceText = prices.map((p) => this.money(p)).join(" to ");
      const block = h("div", { class: "seat-section" },
        h("h3", { class: "section-name" }, section, h("span", { class: "muted" }, ` · ${priceText}`)));
      const height = GEOMETRY.header + rows.length * (GEOMETRY.seat + GEOMETRY.gap);
      if (this.extents.length > 0) top += GEOMETRY.sectionGap;
      this.extents.push({ name: section, top: top + GEOMETRY.header, bottom: top + height });
      top += height;
      for (const [row, rowSeats] of rows) {
        const line = h("div", { class: "seat-row" }, h("span", { class: "row-label", "aria-hidden": "true" }, row));
        const buttons = [];
        for (const seat of rowSeats) {
          const button = this.readOnly
            ? h("span", { class: "seat", role: "img", "data-id": seat.id }, String(seat.number))
            : h("button", { type: "button", class: "seat", tabindex: "-1", "data-id": seat.id }, String(seat.number));
          this.seats.set(seat.id, { seat: { ...seat }, button });
          buttons.push(button);
          line.append(button);
          this.draw(seat.id);
        }
        this.rows.push(buttons);
        block.append(line);
      }
      this.element.append(block);
    }
    this.zoom.setSize(mapSize(grouped.map(([, rows]) => ({ rows: rows.length, seats: Math.max(0, ...rows.map(([, r]) => r.length)) }))));
    // Forget choices of seats that are gone; start the tab stop on a seat.
    for (const id of this.chosen) if (!this.seats.has(id)) this.chosen.delete(id);
    if (!this.readOnly) this.setActive(this.firstTakeable() || this.rows[0]?.[0] || null);
    return [];
  }

  /**
   * Applies new statuses ([{id, status}], the stream's changes). Returns the
   * seats the reader had chosen that someone else just took (now unchosen).
   * @param {import("./types.js").SeatChange[]} changes
   * @returns {Seat[]}
   */
  applyChanges(changes) {
    const lost = [];
    for (const { id, status } of changes) {
      const entry = this.seats.get(id);
      if (!entry || entry.seat.status === status) continue;
      entry.seat.status = status;
      if (status !== "available" && this.chosen.has(id) && !this.mine.has(id)) {
        this.chosen.delete(id);
        lost.push(entry.seat);
      }
      this.draw(id);
    }
    return lost;
  }

  /**
   * Marks the seats of the reader's active hold (empty: none).
   * @param {string[]} ids
   */
  setMine(ids) {
    const before = [...this.mine];
    this.mine = new Set(ids);
    for (const id of [...before, ...ids]) this.draw(id);
  }

  /**
   * The seats the reader chose, in map order.
   * @returns {Seat[]}
   */
  chosenSeats() {
    return [...this.seats.values()].filter((e) => this.chosen.has(e.seat.id)).map((e) => e.seat);
  }

  /** Gives back every chosen seat. */
  clearChoice() {
    const ids = [...this.chosen];
    this.chosen.clear();
    for (const id of ids) this.draw(id);
  }

  /**
   * The seat's status as the reader sees it: theirs and chosen ones apart.
   * @param {string} id a seat of the map
   * @returns {SeatLook}
   */
  statusOf(id) {
    if (this.mine.has(id)) return "mine";
    if (this.chosen.has(id)) return "chosen";
    return this.seat(id).status;
  }

  /**
   * The seat of the map with this id (a button's data-id).
   * @param {string} id
   * @returns {Seat}
   */
  seat(id) {
    const entry = this.seats.get(id);
    if (!entry) throw new Error(`no seat ${id} on the map`);
    return entry.seat;
  }

  /**
   * A price in the event's currency, each formatted once (a map names a few
   * prices on hundreds of seats, redrawn with every change).
   * @param {number} cents
   * @returns {string}
   */
  money(cents) {
    let text = this.prices.get(cents);
    if (text === undefined) this.prices.set(cents, (text = formatMoney(cents, this.currency)));
    return text;
  }

  /**
   * Redraws one seat: its class (the looks) and its accessible name.
   * @param {string} id
   */
  draw(id) {
    const entry = this.seats.get(id);
    if (!entry) return;
    const { seat, button } = entry;
    const status = this.statusOf(id);
    button.className = `seat seat-${status}`;
    const label = `${seat.section}, row ${seat.row}, seat ${seat.number}, ${STATUS_WORDS[status]}, ${this.money(seat.price_cents)}`;
    button.setAttribute("aria-label", label);
    button.title = label;
    if (this.readOnly) return;
    button.setAttribute("aria-pressed", String(status === "chosen"));
    // Seats that cannot be chosen stay focusable (so the arrows reach past
    // them and their status can be read) but say they are unavailable.
    if (status === "held" || status === "sold" || status === "mine") button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
  }

  /** @param {MouseEvent} e */
  onClick(e) {
    if (this.readOnly) return; // dashboard: read-only seat map
    const button = e.target instanceof Element ? e.target.closest(".seat") : null;
    if (!(button instanceof HTMLButtonElement) || !button.dataset.id) return;
    const id = button.dataset.id;
    const seat = this.seat(id);
    /**
     * @param {string} message
     * @param {boolean} [login] the reader is not logged in
     */
    const refuse = (message, login = false) => {
      this.toast(message, button, login);
      this.onRefused(message);
    };
    this.hideToast();
    if (this.chosen.has(id)) {
      this.chosen.delete(id);
    } else {
      const why = this.canChoose();
      if (why) return refuse(why, this.loginHref !== null);
      if (this.mine.has(id)) return refuse(`You already hold ${seatName(seat)}.`);
      if (seat.status !== "available") return refuse(`${seatName(seat)} is ${seat.status}.`);
      if (this.chosen.size >= this.max) return refuse(`You can choose at most ${this.max} seats at once.`);
      this.chosen.add(id);
    }
    this.draw(id);
    this.onToggle(seat, this.chosen.has(id));
  }

  /**
   * Arrow keys, Home and End move the focus from seat to seat.
   * @param {KeyboardEvent} e
   */
  onKey(e) {
    if (e.key === "Escape" && !this.toastEl.hidden) return this.hideToast();
    if (e.key === "+" || e.key === "=") return this.keyZoom(e, ZOOM_STEP);
    if (e.key === "-") return this.keyZoom(e, 1 / ZOOM_STEP);
    if (e.key === "0") return this.keyZoom(e, 0);
    if (!this.active) return;
    const [r, c] = this.position(this.active);
    /** @type {HTMLElement | null | undefined} */
    let target = null;
    switch (e.key) {
      case "ArrowLeft": target = this.rows[r][c - 1]; break;
      case "ArrowRight": target = this.rows[r][c + 1]; break;
      case "ArrowUp": target = this.nearest(r - 1, c); break;
      case "ArrowDown": target = this.nearest(r + 1, c); break;
      case "Home": target = this.rows[r][0]; break;
      case "End": target = this.rows[r][this.rows[r].length - 1]; break;
      default: return;
    }
    e.preventDefault(); // no page scrolling meanwhile
    if (target) {
      this.setActive(target);
      target.focus({ preventScroll: true });
      this.zoom.reveal(target);
      target.scrollIntoView({ block: "nearest" }); // the page, when the map is taller than the screen
    }
  }

  /**
   * + and − zoom around the focused seat, 0 shows the whole map.
   * @param {KeyboardEvent} e
   * @param {number} factor 0: the whole map
   */
  keyZoom(e, factor) {
    e.preventDefault();
    if (factor === 0) this.zoom.reset();
    else this.zoom.zoomBy(factor);
    if (this.active) this.zoom.reveal(this.active);
  }

  /**
   * The seat of row r nearest to column c (rows differ in length).
   * @param {number} r
   * @param {number} c
   * @returns {HTMLElement | null}
   */
  nearest(r, c) {
    const row = this.rows[r];
    return row ? row[Math.min(c, row.length - 1)] : null;
  }

  /**
   * The button's row and column.
   * @param {HTMLElement} button
   * @returns {[number, number]}
   */
  position(button) {
    for (let r = 0; r < this.rows.length; r += 1) {
      const c = this.rows[r].indexOf(button);
      if (c >= 0) return [r, c];
    }
    return [0, 0];
  }

  /**
   * Makes button the map's one tab stop.
   * @param {HTMLElement | null} button
   */
  setActive(button) {
    if (this.active === button) return;
    if (this.active) this.active.tabIndex = -1;
    this.active = button;
    if (button) button.tabIndex = 0;
  }

  firstTakeable() {
    for (const row of this.rows) for (const b of row) if (b.dataset.id && this.statusOf(b.dataset.id) === "available") return b;
    return null;
  }

  /**
   * Whether seats are exactly the seats drawn.
   * @param {Seat[]} seats
   * @returns {boolean}
   */
  sameLayout(seats) {
    return seats.length === this.seats.size && seats.every((s) => this.seats.has(s.id));
  }
}

/**
 * Draws a seat map into el (replacing its children) and returns it: call its
 * setSeats(seats) and applyChanges(changes) to keep it up to date (as
 * seatstream.js's snapshot and changes). The organizer's dashboard draws a
 * read-only map: renderSeatMap(el, {seats, currency}, {readOnly: true}) shows
 * each seat's status (available, held, sold) with no picker.
 * @param {HTMLElement} el
 * @param {{seats?: Seat[], currency: string, sections?: import("./types.js").Section[]}} data
 *   seats: the map's seats (GET /v1/events/{id}/seats); sections: the event's,
 *   to reserve the map's box until seats come
 * @param {Omit<SeatMapOptions, "currency">} [options]
 * @returns {SeatMap}
 */
export function renderSeatMap(el, data, options = {}) {
  const map = new SeatMap({ ...options, currency: data.currency });
  el.replaceChildren(map.frame);
  if (data.sections) map.reserve(data.sections);
  if (data.seats) map.setSeats(data.seats);
  return map;
}

/**
 * "Stalls, row A, seat 1".
 * @param {{section: string, row: string, number: number}} seat
 * @returns {string}
 */
export function seatName(seat) {
  return `${seat.section}, row ${seat.row}, seat ${seat.number}`;
}

/**
 * Seats grouped as [[section, [[row, [seat, …]], …]], …]: sections in the
 * order the API lists them, rows A, B, … Z, AA, … and seats by number.
 * @template {{section: string, row: string, number: number}} S
 * @param {S[]} seats
 * @returns {[string, [string, S[]][]][]}
 */
export function groupSeats(seats) {
  /** @type {Map<string, Map<string, S[]>>} */
  const sections = new Map();
  for (const seat of seats) {
    let rows = sections.get(seat.section);
    if (!rows) sections.set(seat.section, (rows = new Map()));
    let row = rows.get(seat.row);
    if (!row) rows.set(seat.row, (row = []));
    row.push(seat);
  }
  /** @type {(a: [string, S[]], b: [string, S[]]) => number} */
  const byRow = (a, b) => a[0].length - b[0].length || a[0].localeCompare(b[0]);
  return [...sections].map(([name, rows]) => [name,
    [...rows].sort(byRow).map(([row, list]) => [row, list.sort((a, b) => a.number - b.number)])]);
}

/**
 * The legend: each status with its look and its words (of the statuses
 * given: all by default; a read-only map has no "chosen" or "mine").
 * @param {SeatLook[]} [statuses]
 * @returns {HTMLUListElement}
 */
export function seatLegend(statuses) {
  return h("ul", { class: "legend", "aria-label": "Seat statuses" },
    Object.entries(STATUS_WORDS).filter(([status]) => !statuses || statuses.includes(/** @type {SeatLook} */ (status))).map(([status, words]) =>
      h("li", {}, h("span", { class: `seat seat-${status} swatch`, "aria-hidden": "true" }, "1"), words)));
}
