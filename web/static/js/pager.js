// A table filled a page at a time: the first page, then the next (older)
// one each time the reader asks ("Older …"), or the first again (Refresh). The
// organizer's scans and orders pages page so; each says how to read a page.

import { report } from "./notice.js";

/**
 * A page as a pager needs it: its items, and the cursor of the next page
 * (null on the last).
 * @template T
 * @typedef {{items: T[], next: string | null}} PagerPage
 */

/**
 * What a pager fills and reads.
 * @template T
 * @typedef {object} PagerOptions
 * @property {HTMLElement} body where the rows go (a tbody)
 * @property {HTMLButtonElement} older shown while there is a next page
 * @property {HTMLButtonElement} refresh reads the first page again
 * @property {HTMLElement} status says how many rows are shown
 * @property {(cursor: string | null) => Promise<PagerPage<T>>} read a page after the cursor (null: the first)
 * @property {(item: T) => HTMLElement} row an item's row
 * @property {(shown: number, more: boolean) => string} says the status, for this many rows shown
 */

/**
 * Wires a pager's buttons and returns what loads its first page (awaited by
 * the page, so that a failure is the page's); a later page's failure is
 * reported in the notice.
 * @template T
 * @param {PagerOptions<T>} o
 * @returns {() => Promise<void>}
 */
export function pager(o) {
  /** @type {string | null} */
  let cursor = null;
  async function load() {
    o.older.disabled = true;
    const page = await o.read(cursor);
    o.body.append(...page.items.map(o.row));
    cursor = page.next;
    o.older.hidden = !cursor;
    o.older.disabled = false;
    o.status.textContent = o.says(o.body.children.length, Boolean(cursor));
  }
  o.older.addEventListener("click", () => load().catch(report));
  o.refresh.addEventListener("click", () => {
    o.body.replaceChildren();
    cursor = null;
    load().catch(report);
  });
  return load;
}
