// The list of upcoming events, soonest first, a page at a time
// (GET /v1/events?limit=…&after=…; next_after is the next page's `after`).

import { get, retrying } from "../api.js";
import { h } from "../dom.js";
import { formatDateTime, plural } from "../format.js";
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
    for (const event of page.events) list.append(eventCard(event));
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

/**
 * @param {import("../types.js").Event} event
 * @returns {HTMLLIElement}
 */
function eventCard(event) {
  const onSale = new Date(event.on_sale_at) > new Date();
  return h("li", { class: "card" },
    h("h2", {}, h("a", { href: `#/events/${event.id}` }, event.name)),
    h("p", {}, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))),
    h("p", { class: "muted" },
      onSale ? `On sale from ${formatDateTime(event.on_sale_at)}` : `${plural(event.seats_available, "seat")} available of ${event.seats_total}`),
    event.waiting_room ? h("p", { class: "badge" }, "Waiting room") : null);
}
