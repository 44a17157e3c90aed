// The list of upcoming events, soonest first, a page at a time
// (GET /v1/events?limit=…&after=…; next_after is the next page's `after`).

import { get, retrying } from "../api.js";
import { h } from "../dom.js";
import { eventImage } from "../event-image.js";
import { formatDateTime, formatMoney, plural } from "../format.js";
import { report } from "../notice.js";
import { setTitle } from "../router.js";

const PAGE_SIZE = 12;

/** @type {import("../router.js").Page} */
export async function eventsPage({ main, signal }) {
  setTitle(main, "Upcoming events");
  const list = h("ul", { class: "cards", "aria-label": "Events" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show more events");
  const status = h("p", { class: "muted", role: "status" });
  main.append(list, status, more);

  /** @type {string | null} */
  let after = null;
  async function loadPage() {
    more.disabled = true;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (after) query.set("after", after);
    /** @type {import("../types.js").EventPage} */
    const page = await retrying(() => get(`/v1/events?${query}`, { signal }), signal);
    for (const event of page.events) list.append(eventCard(event, list.children.length < 2));
    after = page.next_after;
    more.hidden = !after;
    more.disabled = false;
    status.textContent = list.children.length === 0 ? "No upcoming events yet." : "";
    return page.events.length;
  }
  more.addEventListener("click", async () => {
    const firstNew = list.children.length;
    await loadPage().catch(report);
    // Keyboard users land on the first new event rather than at the end.
    list.children[firstNew]?.querySelector("a")?.focus();
  });
  await loadPage();
}

const dayOfMonth = new Intl.DateTimeFormat(undefined, { day: "numeric" });
const monthShort = new Intl.DateTimeFormat(undefined, { month: "short" });
const whenShort = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", hour: "numeric", minute: "2-digit" });

/**
 * An event's card: a date block (day, month), its name (the link, which the
 * whole card answers to), venue and time, the lowest price, and its image
 * when it has one. The date block is shown, not read: the time line says the
 * same in words.
 * @param {import("../types.js").Event} event
 * @param {boolean} [early] among the first cards, seen without scrolling
 * @returns {HTMLLIElement}
 */
export function eventCard(event, early = false) {
  const starts = new Date(event.starts_at);
  const onSale = new Date(event.on_sale_at) > new Date();
  return h("li", { class: "card event-card" },
    eventImage(event, { lazy: !early, className: "event-card-image" }),
    h("div", { class: "event-card-body" },
      h("div", { class: "date-block", "aria-hidden": "true" },
        h("span", { class: "date-day" }, dayOfMonth.format(starts)),
        h("span", { class: "date-month" }, monthShort.format(starts))),
      h("div", { class: "event-card-text" },
        h("h2", {}, h("a", { href: `#/events/${event.id}`, class: "card-link" }, event.name)),
        h("p", { class: "event-meta" }, event.venue, " · ",
          h("time", { datetime: event.starts_at }, whenShort.format(starts))),
        event.from_price_cents === null ? null
          : h("p", { class: "from-price" }, event.from_price_cents === 0 ? "Free"
            : ["From ", h("strong", {}, formatMoney(event.from_price_cents, event.currency))]),
        h("p", { class: "muted" },
          onSale ? `On sale from ${formatDateTime(event.on_sale_at)}` : `${plural(event.seats_available, "seat")} available of ${event.seats_total}`),
        event.waiting_room ? h("p", { class: "badge" }, "Waiting room") : null)));
}
