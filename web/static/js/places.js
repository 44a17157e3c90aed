// Places of general admission: a section with no seats, only a number of
// places, any of which admits. A buyer chooses how many (the server chooses
// which), so the event page shows one quantity picker a section beside the
// seat map: its price, how many are left, and − / + within what is left and
// what a hold may take. A place has no row or seat number to show: the pages
// name it "General admission · Floor".
//
// The words and the arithmetic are pure functions (tested in web/test);
// PlacePickers draws them, and touches the page only when made.

import { h } from "./dom.js";
import { formatMoney, plural } from "./format.js";

/** @typedef {import("./types.js").Section} Section */

/**
 * What a place of the section is called on every page.
 * @param {string} section its name
 * @returns {string}
 */
export function placeName(section) {
  return `General admission · ${section}`;
}

/**
 * A quantity of places of a section: "2 × General admission · Floor".
 * @param {number} quantity
 * @param {string} section
 * @returns {string}
 */
export function placesText(quantity, section) {
  return `${quantity} × ${placeName(section)}`;
}

/**
 * The quantity after one step (+1 or −1), kept between 0 and the most that may
 * be chosen: what is left of the section, and what the hold has room for
 * besides this section's (room: the places and seats still allowed after
 * everything chosen, this section included).
 * @param {number} current
 * @param {number} step
 * @param {number} available the section's places left
 * @param {number} room what else the hold may take
 * @returns {number}
 */
export function stepQuantity(current, step, available, room) {
  const most = Math.max(0, Math.min(available, current + room));
  return Math.max(0, Math.min(current + step, most));
}

/**
 * What a hold of seats and places is, in words: "2 seats", "3 places of
 * general admission", "2 seats and 3 places of general admission".
 * @param {number} seats
 * @param {number} places
 * @returns {string}
 */
export function heldWords(seats, places) {
  const parts = [];
  if (seats > 0) parts.push(plural(seats, "seat"));
  if (places > 0) parts.push(`${plural(places, "place")} of general admission`);
  return parts.join(" and ") || "nothing";
}

/**
 * How many are left, in words: "120 left", "Sold out".
 * @param {number} available
 * @returns {string}
 */
export function leftWords(available) {
  return available > 0 ? `${available} left` : "Sold out";
}

/**
 * One picker a section of general admission.
 */
export class PlacePickers {
  /**
   * sections: the event's of general admission; currency: the event's;
   * room(): how many more seats and places the hold may take now;
   * canChoose(): null when choosing is allowed, else why not;
   * onChange(): after a quantity changed; onRefused(message): a step not allowed.
   * @param {object} options
   * @param {Section[]} options.sections
   * @param {string} options.currency
   * @param {() => number} options.room
   * @param {() => string | null} [options.canChoose]
   * @param {() => void} [options.onChange]
   * @param {(message: string) => void} [options.onRefused]
   */
  constructor({ sections, currency, room, canChoose = () => null, onChange = () => {}, onRefused = () => {} }) {
    this.currency = currency;
    this.room = room;
    this.canChoose = canChoose;
    this.onChange = onChange;
    this.onRefused = onRefused;
    /** @type {Map<string, {section: Section, quantity: number, count: HTMLOutputElement, left: HTMLElement, less: HTMLButtonElement, more: HTMLButtonElement}>} */
    this.pickers = new Map();
    this.element = h("div", { class: "pickers" });
    for (const section of sections) this.element.append(this.picker(section));
  }

  /**
   * The picker of one section.
   * @param {Section} section
   * @returns {HTMLElement}
   */
  picker(section) {
    const headingId = `places-${section.id}`;
    const count = h("output", { class: "quantity", "aria-live": "polite", "aria-label": `Places of ${section.name} chosen` }, "0");
    const less = h("button", { type: "button", class: "secondary step", "aria-label": `One place fewer of ${section.name}` }, "−");
    const more = h("button", { type: "button", class: "secondary step", "aria-label": `One place more of ${section.name}` }, "+");
    const left = h("span", { class: "left" });
    const entry = { section, quantity: 0, count, left, less, more };
    this.pickers.set(section.id, entry);
    less.addEventListener("click", () => this.step(section.id, -1));
    more.addEventListener("click", () => this.step(section.id, +1));
    this.draw(entry);
    return h("div", { class: "picker", role: "group", "aria-labelledby": headingId },
      h("div", {},
        h("h3", { id: headingId, class: "picker-name" }, section.name),
        h("p", { class: "muted" }, `General admission · ${formatMoney(section.price_cents, this.currency)} each · `, left)),
      h("div", { class: "stepper" }, less, count, more));
  }

  /**
   * Adds step (+1 or −1) to a section's quantity, within its limits.
   * @param {string} id
   * @param {number} step
   */
  step(id, step) {
    const entry = this.pickers.get(id);
    if (!entry) return;
    const why = step > 0 ? this.canChoose() : null;
    if (why) {
      this.onRefused(why);
      return;
    }
    const next = stepQuantity(entry.quantity, step, entry.section.available, this.room());
    if (next === entry.quantity && step > 0) {
      this.onRefused(entry.section.available <= entry.quantity
        ? `${leftWords(entry.section.available)} in ${entry.section.name}.`
        : "A hold takes at most 10 seats and places in all.");
      return;
    }
    entry.quantity = next;
    this.draw(entry);
    this.onChange();
  }

  /**
   * Draws a picker's quantity, what is left, and which steps are allowed.
   * @param {{section: Section, quantity: number, count: HTMLOutputElement, left: HTMLElement, less: HTMLButtonElement, more: HTMLButtonElement}} entry
   */
  draw(entry) {
    entry.count.textContent = String(entry.quantity);
    entry.left.textContent = leftWords(entry.section.available);
    entry.less.disabled = entry.quantity === 0;
    entry.more.disabled = entry.section.available <= entry.quantity;
  }

  /**
   * Takes in new counts of what is left (a fresher event, or a sold-out
   * answer's); a quantity above what is left comes down to it. Returns the
   * names of the sections whose quantity came down.
   * @param {{id: string, available: number}[]} counts
   * @returns {string[]}
   */
  setAvailable(counts) {
    const lowered = [];
    for (const { id, available } of counts) {
      const entry = this.pickers.get(id);
      if (!entry) continue;
      entry.section = { ...entry.section, available };
      if (entry.quantity > available) {
        entry.quantity = available;
        lowered.push(entry.section.name);
      }
      this.draw(entry);
    }
    if (lowered.length > 0) this.onChange();
    return lowered;
  }

  /**
   * The places chosen, by section, in the event's order.
   * @returns {{section: Section, quantity: number}[]}
   */
  chosen() {
    return [...this.pickers.values()].filter((e) => e.quantity > 0).map((e) => ({ section: e.section, quantity: e.quantity }));
  }

  /** How many places are chosen, in all. */
  count() {
    return this.chosen().reduce((n, c) => n + c.quantity, 0);
  }

  /** Sets every quantity back to 0. */
  clear() {
    for (const entry of this.pickers.values()) {
      entry.quantity = 0;
      this.draw(entry);
    }
  }
}
