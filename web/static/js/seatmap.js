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

/** Words for each status, as read out and shown in the legend. */
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
   * canChoose(): null when choosing is allowed, else why not (shown to the reader).
   */
  constructor({ currency, max = 10, onToggle = () => {}, canChoose = () => null, onRefused = () => {} }) {
    this.currency = currency;
    this.max = max;
    this.onToggle = onToggle;
    this.canChoose = canChoose;
    this.onRefused = onRefused; // onRefused(message): a choice that was not allowed
    this.seats = new Map(); // id → {seat, button}
    this.rows = []; // [[button, …], …] top to bottom, for arrow keys
    this.chosen = new Set(); // ids the reader chose
    this.mine = new Set(); // ids in the reader's active hold
    this.active = null; // the button with tabindex 0

    this.element = h("div", {
      class: "seatmap", role: "group", "aria-label": "Seat map",
      onkeydown: (e) => this.onKey(e), onclick: (e) => this.onClick(e),
      onfocusin: (e) => e.target.matches(".seat") && this.setActive(e.target),
    });
  }

  /** Draws the map from a full list of seats (GET …/seats, or the stream's snapshot). */
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

  /** Marks the seats of the reader's active hold (empty: none). */
  setMine(ids) {
    const before = [...this.mine];
    this.mine = new Set(ids);
    for (const id of [...before, ...ids]) this.draw(id);
  }

  /** The seats the reader chose, in map order. */
  chosenSeats() {
    return [...this.seats.values()].filter((e) => this.chosen.has(e.seat.id)).map((e) => e.seat);
  }

  /** Gives back every chosen seat. */
  clearChoice() {
    const ids = [...this.chosen];
    this.chosen.clear();
    for (const id of ids) this.draw(id);
  }

  /** The seat's status as the reader sees it: theirs and chosen ones apart. */
  statusOf(id) {
    const { seat } = this.seats.get(id);
    if (this.mine.has(id)) return "mine";
    if (this.chosen.has(id)) return "chosen";
    return seat.status;
  }

  /** Redraws one seat: its class (the looks) and its accessible name. */
  draw(id) {
    const entry = this.seats.get(id);
    if (!entry) return;
    const { seat, button } = entry;
    const status = this.statusOf(id);
    button.className = `seat seat-${status}`;
    const label = `${seat.section}, row ${seat.row}, seat ${seat.number}, ${STATUS_WORDS[status]}, ${formatMoney(seat.price_cents, this.currency)}`;
    button.setAttribute("aria-label", label);
    button.title = label;
    button.setAttribute("aria-pressed", String(status === "chosen"));
    // Seats that cannot be chosen stay focusable (so the arrows reach past
    // them and their status can be read) but say they are unavailable.
    if (status === "held" || status === "sold" || status === "mine") button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
  }

  onClick(e) {
    const button = e.target.closest(".seat");
    if (!button) return;
    const id = button.dataset.id;
    const { seat } = this.seats.get(id);
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

  /** Arrow keys, Home and End move the focus from seat to seat. */
  onKey(e) {
    if (!this.active) return;
    const [r, c] = this.position(this.active);
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

  /** The seat of row r nearest to column c (rows differ in length). */
  nearest(r, c) {
    const row = this.rows[r];
    return row ? row[Math.min(c, row.length - 1)] : null;
  }

  position(button) {
    for (let r = 0; r < this.rows.length; r += 1) {
      const c = this.rows[r].indexOf(button);
      if (c >= 0) return [r, c];
    }
    return [0, 0];
  }

  /** Makes button the map's one tab stop. */
  setActive(button) {
    if (this.active === button) return;
    if (this.active) this.active.tabIndex = -1;
    this.active = button;
    if (button) button.tabIndex = 0;
  }

  firstTakeable() {
    for (const row of this.rows) for (const b of row) if (this.statusOf(b.dataset.id) === "available") return b;
    return null;
  }

  sameLayout(seats) {
    return seats.length === this.seats.size && seats.every((s) => this.seats.has(s.id));
  }
}

/** "Stalls, row A, seat 1". */
export function seatName(seat) {
  return `${seat.section}, row ${seat.row}, seat ${seat.number}`;
}

/**
 * Seats grouped as [[section, [[row, [seat, …]], …]], …]: sections in the
 * order the API lists them, rows A, B, … Z, AA, … and seats by number.
 */
export function groupSeats(seats) {
  const sections = new Map();
  for (const seat of seats) {
    if (!sections.has(seat.section)) sections.set(seat.section, new Map());
    const rows = sections.get(seat.section);
    if (!rows.has(seat.row)) rows.set(seat.row, []);
    rows.get(seat.row).push(seat);
  }
  const byRow = (a, b) => a[0].length - b[0].length || a[0].localeCompare(b[0]);
  return [...sections].map(([name, rows]) => [name,
    [...rows].sort(byRow).map(([row, list]) => [row, list.sort((a, b) => a.number - b.number)])]);
}

/** The legend: each status with its look and its words. */
export function seatLegend() {
  return h("ul", { class: "legend", "aria-label": "Seat statuses" },
    Object.entries(STATUS_WORDS).map(([status, words]) =>
      h("li", {}, h("span", { class: `seat seat-${status} swatch`, "aria-hidden": "true" }, "1"), words)));
}
