// The box office of one event: its orders, newest first, a page at a time
// (GET /v1/organizer/events/{id}/orders?after=…; next_after is the next,
// older page's after), each with its buyer, its tickets and its total; and
// the attendee list to download as CSV (…/attendees.csv).

import { get, readEvent, retrying } from "../api.js";
import { h } from "../dom.js";
import { formatDateTime, formatMoney, plural } from "../format.js";
import { organizerTicketWords, placeName } from "../boxoffice-words.js";
import { pager } from "../pager.js";
import { requireUser, setTitle } from "../router.js";

const PAGE_SIZE = 50;

/** @type {Record<import("../types.js").OrganizerOrder["status"], string>} */
const ORDER_STATUS = {
  pending: "Payment being confirmed",
  confirmed: "Paid",
  refunded: "Refunded",
};

// The table's columns. On a narrow screen each order is a block of its
// cells, each cell labelled (app.css, .stacked); the roles keep it a table for
// screen readers, which a table's display changed by CSS may no longer be.
const COLUMNS = ["Buyer", "Ordered", "Tickets", "Total", "Status"];

/**
 * One order's row: who, when, what, how much, and its state.
 * @param {import("../types.js").OrganizerOrder} o
 * @returns {HTMLTableRowElement}
 */
function orderRow(o) {
  /**
   * @param {number} i the column
   * @param {Record<string, import("../dom.js").AttrValue>} attrs
   * @param {...import("../dom.js").Child} children
   */
  const cell = (i, attrs, ...children) => h("td", { role: "cell", "data-label": COLUMNS[i], ...attrs }, ...children);
  return h("tr", { role: "row" },
    h("th", { scope: "row", role: "rowheader", class: "email-cell" }, o.buyer_email),
    cell(1, {}, h("time", { datetime: o.created_at }, formatDateTime(o.created_at))),
    cell(2, {}, o.tickets.length === 0 ? h("span", { class: "muted" }, "None yet")
      : h("ul", { class: "seat-list" }, o.tickets.map((t) => h("li", {},
        placeName(t.seat), " · ", h("span", { class: "muted" }, organizerTicketWords(t, o.buyer_email)))))),
    cell(3, { class: "num" }, formatMoney(o.total_cents, o.currency)),
    cell(4, {}, ORDER_STATUS[o.status] || o.status));
}

/** @type {import("../router.js").Page} */
export async function ordersPage({ main, params, signal }) {
  const heading = setTitle(main, "Orders");
  if (!requireUser(main, "organizer")) return;
  const id = encodeURIComponent(params.id);
  const event = await readEvent(params.id, signal);
  heading.textContent = `Orders of ${event.name}`;
  document.title = `Orders of ${event.name} · Stagedoor`;

  const body = h("tbody", { role: "rowgroup" });
  const status = h("p", { role: "status", class: "muted" });
  const older = h("button", { type: "button", class: "secondary", hidden: true }, "Older orders");
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  main.append(
    h("p", { class: "lead" }, event.venue, " · ", formatDateTime(event.starts_at)),
    h("div", { class: "actions" },
      // A download: the browser sends the session cookie and saves the file.
      h("a", { class: "button secondary", href: `/v1/organizer/events/${id}/attendees.csv`, download: "" }, "Export attendees (CSV)"),
      refresh),
    h("p", { class: "hint" }, "The attendee list has one row for each ticket that admits, checked in or not, with its holder's email."),
    h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Orders, scrollable" },
      h("table", { class: "stacked", role: "table" },
        h("caption", { class: "visually-hidden" }, `Orders of ${event.name}, newest first`),
        h("thead", { role: "rowgroup" }, h("tr", { role: "row" }, COLUMNS.map((t) => h("th", { scope: "col", role: "columnheader" }, t)))),
        body)),
    status, older);

  const first = pager({
    body, older, refresh, status, row: orderRow,
    read: async (after) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (after) query.set("after", after);
      /** @type {import("../types.js").OrganizerOrderPage} */
      const page = await retrying(() => get(`/v1/organizer/events/${id}/orders?${query}`, { signal }), signal);
      return { items: page.orders, next: page.next_after };
    },
    says: (n, more) => (n === 0 ? "No orders yet." : `${plural(n, "order")} shown${more ? "; older ones follow" : ""}.`),
  });
  await first();
}
