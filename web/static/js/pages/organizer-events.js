// An organizer's events: the list with seats held and sold and the revenue
// (GET /v1/organizer/events), each linked to its page (organizer-event.js:
// change, cancel), and the form that creates one (POST /v1/events).

import { api, get, retrying } from "../api.js";
import { cards } from "../cards.js";
import { field, h, onSubmit, selectField } from "../dom.js";
import { formatDateTime, formatMoney, localInputToISO, plural, toCents } from "../format.js";
import { report } from "../notice.js";
import { go, requireUser, setTitle } from "../router.js";

/** @type {import("../router.js").Page} */
export async function organizerEventsPage({ main, signal }) {
  setTitle(main, "My events");
  if (!requireUser(main, "organizer")) return;
  main.append(h("p", {}, h("a", { href: "#/organizer/events/new", class: "button primary" }, "Create an event")));
  /** @type {{events: import("../types.js").OrganizerEvent[]}} */
  const { events } = await retrying(() => get("/v1/organizer/events", { signal }), signal);
  if (events.length === 0) {
    main.append(h("p", {}, "You have no events yet."));
    return;
  }
  main.append(h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "My events, scrollable" },
    cards(h("table", {},
      h("caption", { class: "visually-hidden" }, "My events, with seats held and sold and the revenue"),
      h("thead", {}, h("tr", {},
        ["Event", "Starts", "Sold", "Held", "Available", "Revenue", "Box office", "Door"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, events.map((e) => h("tr", {},
        h("th", { scope: "row" }, h("a", { href: `#/organizer/events/${e.id}` }, e.name), h("br"),
          e.status === "cancelled" ? h("span", { class: "status-cancelled" }, "Cancelled ") : null,
          h("span", { class: "muted" }, e.venue)),
        h("td", {}, formatDateTime(e.starts_at)),
        h("td", { class: "num" }, `${e.seats_sold} of ${e.seats_total}`),
        h("td", { class: "num" }, String(e.seats_held)),
        h("td", { class: "num" }, String(e.seats_available)),
        h("td", { class: "num" }, formatMoney(e.revenue_cents ?? 0, e.currency)),
        h("td", {}, h("a", { href: `#/organizer/events/${e.id}/orders`, "aria-label": `Orders of ${e.name}` }, "Orders")),
        h("td", {}, h("a", { href: `#/organizer/events/${e.id}/scans`, "aria-label": `Scans of ${e.name}` }, "Scans")))))))));
}

/** @type {import("../router.js").Page} */
export async function newEventPage({ main, signal }) {
  setTitle(main, "New event");
  if (!requireUser(main, "organizer")) return;

  const name = field("Name", { required: true, maxlength: 200, autocomplete: "off" });
  const venue = field("Venue", { required: true, maxlength: 200 });
  const startsAt = field("Starts at", { type: "datetime-local", required: true }, "In your local time.");
  const onSaleAt = field("On sale from", { type: "datetime-local" }, "Optional: leave empty to put it on sale now.");
  const refundsUntil = field("Buyers may refund until", { type: "datetime-local" },
    "Optional: leave empty for no refunds. Before the start.");
  const currency = field("Currency", {
    required: true, value: "USD", maxlength: 3, pattern: "[A-Z]{3}", autocapitalize: "characters", class: "short",
  }, "Three capital letters, such as USD or EUR.");
  const sections = h("div", { class: "sections" });
  const addSection = h("button", { type: "button", class: "secondary" }, "Add a section");
  const roomOn = h("input", { type: "checkbox", id: "room-on" });
  const admit = field("Buyers admitted per second", { type: "number", min: 1, max: 100000, value: 50, class: "short" },
    "Buyers wait in a queue and are let in at this rate.");
  admit.field.hidden = true;
  roomOn.addEventListener("change", () => { admit.field.hidden = !roomOn.checked; });

  const form = h("form", { class: "form" },
    name.field, venue.field, startsAt.field, onSaleAt.field, refundsUntil.field, currency.field,
    h("h2", {}, "Sections"),
    h("p", { class: "hint" }, "A seated section's seats are made row by row: rows A, B, C… numbered from 1. "
      + "A section of general admission has places instead, as many as its capacity, with no seat numbers. "
      + "Prices are in the currency's units, such as 45.50."),
    sections, addSection,
    h("h2", {}, "Waiting room"),
    h("div", { class: "choice" }, roomOn, h("label", { for: "room-on" }, "Use a waiting room for this sale")),
    admit.field,
    h("button", { type: "submit", class: "primary" }, "Create event"));
  main.append(form);

  addSection.addEventListener("click", () => {
    const added = sectionFields(sections);
    sections.append(added);
    renumber(sections);
    added.querySelector("input")?.focus();
  });
  sections.append(sectionFields(sections));
  renumber(sections);

  onSubmit(form, async () => {
    // Prices are typed in the currency's units and sent in cents.
    for (const price of form.querySelectorAll("input[data-price]")) {
      if (!(price instanceof HTMLInputElement)) continue;
      price.setCustomValidity(Number.isNaN(toCents(price.value)) ? "Enter a price such as 45 or 45.50." : "");
    }
    if (!form.reportValidity()) return;
    /** @type {import("../types.js").EventRequest} */
    const body = {
      name: name.input.value.trim(),
      venue: venue.input.value.trim(),
      starts_at: localInputToISO(startsAt.input.value),
      currency: currency.input.value.trim().toUpperCase(),
      sections: [...sections.children].map(sectionRequest),
    };
    if (onSaleAt.input.value) body.on_sale_at = localInputToISO(onSaleAt.input.value);
    if (refundsUntil.input.value) body.refunds_until = localInputToISO(refundsUntil.input.value);
    if (roomOn.checked) body.waiting_room = { admit_per_second: Number(admit.input.value) };
    try {
      /** @type {import("../api.js").Answer<import("../types.js").Event>} */
      const { data: event } = await api("POST", "/v1/events", { body, signal });
      go("/organizer", `Event “${event.name}” created with ${capacityWords(event.sections ?? [])}.`);
    } catch (err) {
      report(err);
    }
  });
}

/**
 * The input of a section's fields that carries the attribute (data-rows, …).
 * @param {Element} fieldset
 * @param {string} attribute
 * @returns {HTMLInputElement}
 */
function inputOf(fieldset, attribute) {
  const input = fieldset.querySelector(`input[${attribute}]`);
  if (!(input instanceof HTMLInputElement)) throw new Error(`a section has no input[${attribute}]`);
  return input;
}

/**
 * A section's fields as the API takes them: seated, or of general admission.
 * @param {Element} fs
 * @returns {import("../types.js").SectionRequest}
 */
function sectionRequest(fs) {
  const name = inputOf(fs, "data-name").value.trim();
  const price = toCents(inputOf(fs, "data-price").value);
  if (isGeneral(fs)) {
    return { name, general_admission: true, capacity: Number(inputOf(fs, "data-capacity").value), price_cents: price };
  }
  return { name, rows: Number(inputOf(fs, "data-rows").value), seats_per_row: Number(inputOf(fs, "data-seats").value), price_cents: price };
}

/**
 * Whether the section's fields say general admission.
 * @param {Element} fs
 * @returns {boolean}
 */
function isGeneral(fs) {
  const kind = fs.querySelector("select[data-kind]");
  return kind instanceof HTMLSelectElement && kind.value === "general";
}

/**
 * "120 seats and 500 places of general admission": what the sections hold.
 * @param {import("../types.js").Section[]} sections
 * @returns {string}
 */
function capacityWords(sections) {
  const seats = sections.filter((s) => !s.general_admission).reduce((n, s) => n + s.capacity, 0);
  const places = sections.filter((s) => s.general_admission).reduce((n, s) => n + s.capacity, 0);
  return [seats > 0 ? plural(seats, "seat") : "", places > 0 ? `${plural(places, "place")} of general admission` : ""]
    .filter(Boolean).join(" and ");
}

/**
 * The fields of one section, with a button that removes it.
 * @param {HTMLElement} container the sections
 * @returns {HTMLFieldSetElement}
 */
function sectionFields(container) {
  const fs = h("fieldset", { class: "section-fields" }, h("legend", {}, "Section"));
  const name = field("Section name", { required: true, maxlength: 200, "data-name": true, value: container.children.length === 0 ? "Stalls" : "" });
  const kind = selectField("Kind", [["seated", "Seats in rows"], ["general", "General admission"]]);
  kind.input.setAttribute("data-kind", "");
  const rows = field("Rows", { type: "number", required: true, min: 1, max: 100, value: 5, "data-rows": true, class: "short" });
  const seats = field("Seats per row", { type: "number", required: true, min: 1, max: 100, value: 10, "data-seats": true, class: "short" });
  const capacity = field("Places", { type: "number", min: 1, max: 10000, value: 500, "data-capacity": true, class: "short" });
  const price = field("Price", { required: true, inputmode: "decimal", "data-price": true, value: "45.00", class: "short" });
  // A kind's own fields show, and only they are required.
  const showKind = () => {
    const general = kind.input.value === "general";
    rows.field.hidden = seats.field.hidden = general;
    capacity.field.hidden = !general;
    rows.input.required = seats.input.required = !general;
    capacity.input.required = general;
  };
  kind.input.addEventListener("change", showKind);
  showKind();
  const remove = h("button", { type: "button", class: "link-button" }, "Remove this section");
  remove.addEventListener("click", () => {
    fs.remove();
    renumber(container);
    container.querySelector("input")?.focus();
  });
  fs.append(h("div", { class: "row-of-fields" }, name.field, kind.field, rows.field, seats.field, capacity.field, price.field), remove);
  return fs;
}

/**
 * Numbers the sections' legends and hides Remove when one is left.
 * @param {HTMLElement} container the sections
 */
function renumber(container) {
  [...container.children].forEach((fs, i) => {
    const legend = fs.querySelector("legend");
    const remove = fs.querySelector(".link-button");
    if (legend) legend.textContent = `Section ${i + 1}`;
    if (remove instanceof HTMLElement) remove.hidden = container.children.length === 1;
  });
}
