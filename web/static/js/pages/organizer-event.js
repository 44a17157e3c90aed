// One of the organizer's events (GET /v1/organizer/events/{id}): its sales,
// live, with its seat map read-only (organizer-sales.js); links to its orders,
// scans and keys; the form that changes its name, venue, description, start and refund
// window (PATCH); and its cancellation (POST …/cancel), confirmed by typing
// the event's name, after which the page follows the refunds of its orders
// live until every buyer has their money back.

import { api, get, retrying } from "../api.js";
import { imageControl } from "../event-image.js";
import { field, h, onAbort, onSubmit, replace, sleep, uid } from "../dom.js";
import { formatDateTime, localInputToISO, plural, toLocalInput } from "../format.js";
import { report, showMessage } from "../notice.js";
import { requireUser, setTitle } from "../router.js";
import { salesPanel } from "./organizer-sales.js";

/** @typedef {import("../types.js").OrganizerEvent} OrganizerEvent */

// How often the page asks how the refunds of a cancelled event are going.
const progressEveryMs = 2000;

/** @type {import("../router.js").Page} */
export async function organizerEventPage({ main, params, signal }) {
  if (!requireUser(main, "organizer")) {
    setTitle(main, "Event");
    return;
  }
  /** @type {OrganizerEvent} */
  const event = await retrying(() => get(`/v1/organizer/events/${params.id}`, { signal }), signal);
  setTitle(main, event.name);
  const body = h("div", {});
  main.append(body);
  draw(body, event, signal, salesPanel(event, signal));
}

/**
 * Draws the event: a cancelled one with its refunds' progress, a scheduled
 * one with its change form and its cancellation.
 * @param {HTMLElement} body
 * @param {OrganizerEvent} event
 * @param {AbortSignal} signal
 * @param {HTMLElement} sales the dashboard, kept across redraws
 */
function draw(body, event, signal, sales) {
  const facts = h("p", {});
  showFacts(facts, event);
  sales.dataset.status = event.status;
  const links = h("nav", { class: "dash-nav no-print", "aria-label": "This event" },
    h("ul", {},
      h("li", {}, h("a", { href: `#/organizer/events/${event.id}`, "aria-current": "page" }, "Sales")),
      h("li", {}, h("a", { href: `#/organizer/events/${event.id}/orders` }, "Orders")),
      h("li", {}, h("a", { href: `#/organizer/events/${event.id}/scans` }, "Scans at the door")),
      h("li", {}, h("a", { href: "#/organizer/keys" }, "Scanner keys")),
      h("li", {}, h("a", { href: `#/events/${event.id}` }, "The buyers' page")),
      h("li", {}, h("a", { href: "#/organizer" }, "All my events"))));
  if (event.status === "cancelled") {
    replace(body, h("p", { class: "status-cancelled" }, "Cancelled"), facts, links,
      progressPanel(event, (e) => showFacts(facts, e), signal), sales);
    return;
  }
  replace(body, facts, links, sales, changeForm(body, event, signal, sales),
    imageControl(event, signal, (changed) => draw(body, changed, signal, sales)), cancelZone(body, event, signal, sales));
}

/**
 * Shows the event's where and when in p (its sales are the dashboard's).
 * @param {HTMLParagraphElement} p
 * @param {OrganizerEvent} event
 */
function showFacts(p, event) {
  replace(p, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at)));
}

/**
 * The form that changes the event; only the fields changed are sent.
 * @param {HTMLElement} body
 * @param {OrganizerEvent} event
 * @param {AbortSignal} signal
 * @param {HTMLElement} sales
 * @returns {HTMLFormElement}
 */
function changeForm(body, event, signal, sales) {
  const name = field("Name", { required: true, maxlength: 200, value: event.name });
  const venue = field("Venue", { required: true, maxlength: 200, value: event.venue });
  const descriptionId = uid("f");
  const description = h("textarea", { id: descriptionId, rows: 4, maxlength: 4000, "aria-describedby": `${descriptionId}-hint` });
  description.value = event.description;
  const startsAt = field("Starts at", { type: "datetime-local", required: true, value: toLocalInput(new Date(event.starts_at)) },
    "In your local time.");
  const refundsUntil = field("Buyers may refund until", {
    type: "datetime-local", value: event.refunds_until ? toLocalInput(new Date(event.refunds_until)) : "",
  }, "Leave empty for no refunds. Once tickets are sold this can only move later.");
  const form = h("form", { class: "form" },
    h("h2", {}, "Change the event"),
    name.field, venue.field,
    h("div", { class: "field" },
      h("label", { for: descriptionId }, "Description"),
      h("p", { class: "hint", id: `${descriptionId}-hint` }, "Optional: what buyers should know. Line breaks are kept."),
      description),
    startsAt.field, refundsUntil.field,
    h("button", { type: "submit", class: "primary" }, "Save changes"));
  onSubmit(form, async () => {
    if (!form.reportValidity()) return;
    /** @type {import("../types.js").EventChange} */
    const change = {};
    if (name.input.value.trim() !== event.name) change.name = name.input.value.trim();
    if (venue.input.value.trim() !== event.venue) change.venue = venue.input.value.trim();
    if (description.value.trim() !== event.description) change.description = description.value;
    const starts = localInputToISO(startsAt.input.value);
    if (Date.parse(starts) !== Date.parse(event.starts_at)) change.starts_at = starts;
    const until = refundsUntil.input.value ? localInputToISO(refundsUntil.input.value) : null;
    if ((until === null) !== (event.refunds_until === null) || (until && event.refunds_until && Date.parse(until) !== Date.parse(event.refunds_until))) {
      change.refunds_until = until;
    }
    if (Object.keys(change).length === 0) {
      showMessage("Nothing was changed.");
      return;
    }
    try {
      /** @type {import("../api.js").Answer<OrganizerEvent>} */
      const { data } = await api("PATCH", `/v1/organizer/events/${event.id}`, { body: change, signal });
      showMessage("Your changes are saved.");
      draw(body, data, signal, sales);
    } catch (err) {
      report(err);
    }
  });
  return form;
}

/**
 * The cancellation: what it does, and a button that works once the event's
 * name is typed.
 * @param {HTMLElement} body
 * @param {OrganizerEvent} event
 * @param {AbortSignal} signal
 * @param {HTMLElement} sales
 * @returns {HTMLElement}
 */
function cancelZone(body, event, signal, sales) {
  const typed = field("Type the event's name to confirm", { autocomplete: "off", spellcheck: "false" },
    `Type “${event.name}” exactly.`);
  const button = h("button", { type: "button", class: "danger", disabled: true }, "Cancel the event");
  typed.input.addEventListener("input", () => { button.disabled = typed.input.value.trim() !== event.name; });
  button.addEventListener("click", async () => {
    if (typed.input.value.trim() !== event.name) return;
    button.disabled = true;
    try {
      /** @type {import("../api.js").Answer<OrganizerEvent>} */
      const { data } = await api("POST", `/v1/organizer/events/${event.id}/cancel`, { signal });
      showMessage(`“${event.name}” is cancelled. Every buyer is being refunded.`);
      draw(body, data, signal, sales);
    } catch (err) {
      button.disabled = false;
      report(err);
    }
  });
  const headingId = uid("h");
  return h("section", { class: "danger-zone", "aria-labelledby": headingId },
    h("h2", { id: headingId }, "Cancel the event"),
    h("p", {}, "Every buyer gets all their money back, their tickets stop working, and nothing more is sold. "
      + "The event can no longer be changed. This cannot be undone."),
    typed.field, button);
}

/**
 * The refunds of a cancelled event, asked for every progressEveryMs until
 * every order is refunded; each answer is also given to changed.
 * @param {OrganizerEvent} event
 * @param {(e: OrganizerEvent) => void} changed
 * @param {AbortSignal} signal
 * @returns {HTMLElement}
 */
function progressPanel(event, changed, signal) {
  const headingId = uid("h");
  const bar = h("progress", { max: 1, value: 0, "aria-labelledby": headingId });
  const words = h("p", { role: "status" });
  const panel = h("section", { class: "panel", "aria-labelledby": headingId },
    h("h2", { id: headingId }, "Refunding the buyers"), h("div", { class: "progress-line" }, bar, words));
  /** @param {import("../types.js").Cancellation | null} c */
  const show = (c) => {
    const orders = c?.orders ?? 0;
    const refunded = c?.refunded ?? 0;
    bar.max = Math.max(orders, 1);
    bar.value = c?.done ? bar.max : refunded;
    if (c?.done) words.textContent = orders === 0 ? "Done: there was nothing to refund." : `Done: ${plural(orders, "order")} refunded, every buyer paid back.`;
    else words.textContent = `${refunded} of ${plural(orders, "order")} refunded so far. This page keeps up by itself.`;
  };
  show(event.cancellation);
  if (!event.cancellation?.done) {
    follow(event.id, (e) => { show(e.cancellation); changed(e); }, signal);
  }
  return panel;
}

/**
 * Reads the event again until its cancellation is done or the page is left,
 * passing each answer to show; a failed read is tried again next time.
 * @param {string} id
 * @param {(e: OrganizerEvent) => void} show
 * @param {AbortSignal} signal
 */
async function follow(id, show, signal) {
  let stopped = false;
  onAbort(signal, () => { stopped = true; });
  while (!stopped) {
    try {
      await sleep(progressEveryMs, signal);
      /** @type {OrganizerEvent} */
      const e = await get(`/v1/organizer/events/${id}`, { signal });
      show(e);
      if (e.cancellation?.done) return;
    } catch (err) {
      if (signal.aborted) return;
      // Not reachable for a moment: the next round asks again.
    }
  }
}
