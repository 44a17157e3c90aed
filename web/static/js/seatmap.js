// The seat map: every seat of an event drawn by section and row, coloured by
// status, and more than colour: held seats are striped, sold ones struck
// through and dark, chosen ones carry a ✓ and the reader's own held ones a ★
// (see app.css). Each seat is a button whose accessible name says it all:
// "Stalls, row A, seat 1, available, $45.00".
//
// Keyboard: the whole map is one tab stop (a "roving tabindex": only the
// current seat has tabindex 0). Arrow keys move between seats, Home and End to
// a row's ends; Space or Enter chooses a seat or gives it back (the buttons'
// own behaviour).

import { h } from "./dom.js";
import { formatMoney } from "./format.js";

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

export class SeatMap {
  /**
   * currency: the event's; max: most seats one may choose;
   * onToggle(seat, chosen): after a seat was chosen or given back;
   * canChoose(): null when choosing is allowed, else why not (shown to the reader);
   * onRefused(message): a choice that was not allowed;
   * readOnly: the map only shows the seats (the organizer's dashboard): no
   * seat can be chosen, none is pressed.
   * @param {object} options
   * @param {string} options.currency
   * @param {number} [options.max]
   * @param {(seat: Seat, chosen: boolean) => void} [options.onToggle]
   * @param {() => string | null} [options.canChoose]
   * @param {(message: string) => void} [options.onRefused]
   * @param {boolean} [options.readOnly]
   */
  constructor({ currency, max = 10, onToggle = () => {}, canChoose = () => null, onRefused = () => {}, readOnly = false }) {
    this.readOnly = readOnly; // dashboard: read-only seat map
    this.currency = currency;
    this.max = max;
    this.onToggle = onToggle;
    this.canChoose = canChoose;
    this.onRefused = onRefused;
    /** @type {Map<string, {seat: Seat, button: HTMLButtonElement}>} */
    this.seats = new Map();
    /** @type {HTMLButtonElement[][]} top to bottom, for arrow keys */
    this.rows = [];
    /** @type {Set<string>} ids the reader chose */
    this.chosen = new Set();
    /** @type {Set<string>} ids in the reader's active hold */
    this.mine = new Set();
    /** @type {HTMLButtonElement | null} the button with tabindex 0 */
    this.active = null;

    this.element = h("div", { class: "seatmap", role: "group", "aria-label": "Seat map" });
    this.element.addEventListener("keydown", (e) => this.onKey(e));
    this.element.addEventListener("click", (e) => this.onClick(e));
    this.element.addEventListener("focusin", (e) => {
      if (e.target instanceof HTMLButtonElement && e.target.matches(".seat")) this.setActive(e.target);
    });
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
    this.element.replaceChildren();
    for (const [section, rows] of groupSeats(seats)) {
      const prices = [...new Set(rows.flatMap(([, r]) => r.map((s) => s.price_cents)))].sort((a, b) => a - b);
      const priceText = prices.map((p) => formatMoney(p, this.currency)).join(" to ");
      const block = h("div", { class: "seat-section" },
        h("h3", { class: "section-name" }, section, h("span", { class: "muted" }, ` · ${priceText}`)));
      for (const [row, rowSeats] of rows) {
        const line = h("div", { class: "seat-row" }, h("span", { class: "row-label", "aria-hidden": "true" }, row));
        const buttons = [];
        for (const seat of rowSeats) {
          const button = h("button", { type: "button", class: "seat", tabindex: "-1", "data-id": seat.id }, String(seat.number));
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
    // Forget choices of seats that are gone; start the tab stop on a seat.
    for (const id of this.chosen) if (!this.seats.has(id)) this.chosen.delete(id);
    this.setActive(this.firstTakeable() || this.rows[0]?.[0] || null);
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
   * Redraws one seat: its class (the looks) and its accessible name.
   * @param {string} id
   */
  draw(id) {
    const entry = this.seats.get(id);
    if (!entry) return;
    const { seat, button } = entry;
    const status = this.statusOf(id);
    button.className = `seat seat-${status}`;
    const label = `${seat.section}, row ${seat.row}, seat ${seat.number}, ${STATUS_WORDS[status]}, ${formatMoney(seat.price_cents, this.currency)}`;
    button.setAttribute("aria-label", label);
    button.title = label;
    if (this.readOnly) { button.setAttribute("aria-disabled", "true"); return; } // dashboard: read-only seat map
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
    /** @param {string} message */
    const refuse = (message) => this.onRefused(message);
    if (this.chosen.has(id)) {
      this.chosen.delete(id);
    } else {
      const why = this.canChoose();
      if (why) return refuse(why);
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
    if (!this.active) return;
    const [r, c] = this.position(this.active);
    /** @type {HTMLButtonElement | null | undefined} */
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
      target.focus();
      target.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }

  /**
   * The seat of row r nearest to column c (rows differ in length).
   * @param {number} r
   * @param {number} c
   * @returns {HTMLButtonElement | null}
   */
  nearest(r, c) {
    const row = this.rows[r];
    return row ? row[Math.min(c, row.length - 1)] : null;
  }

  /**
   * The button's row and column.
   * @param {HTMLButtonElement} button
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
   * @param {HTMLButtonElement | null} button
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
 * The legend: each status with its look and its words.
 * @returns {HTMLUListElement}
 */
export function seatLegend() {
  return h("ul", { class: "legend", "aria-label": "Seat statuses" },
    Object.entries(STATUS_WORDS).map(([status, words]) =>
      h("li", {}, h("span", { class: `seat seat-${status} swatch`, "aria-hidden": "true" }, "1"), words)));
}
