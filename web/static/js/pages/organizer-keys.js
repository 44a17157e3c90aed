// Scanner keys: one per door device. A new key is shown once, with a button
// that copies it (the server keeps only its SHA-256); the list shows labels,
// events and revocations, never keys; a lost device's key is revoked.

import { api, get, retrying } from "../api.js";
import { cards } from "../cards.js";
import { field, h, onSubmit, replace, selectField } from "../dom.js";
import { formatDateTime } from "../format.js";
import { clearNotice, report, showMessage } from "../notice.js";
import { requireUser, setTitle } from "../router.js";

/** @typedef {import("../types.js").ScannerKey} ScannerKey */

/** @type {import("../router.js").Page} */
export async function keysPage({ main, signal }) {
  setTitle(main, "Scanner keys");
  if (!requireUser(main, "organizer")) return;
  /** @type {{events: import("../types.js").OrganizerEvent[]}} */
  const { events } = await retrying(() => get("/v1/organizer/events", { signal }), signal);
  const eventNames = new Map(events.map((e) => [e.id, e.name]));

  const label = field("Label", { required: true, maxlength: 100, placeholder: "North gate 1" }, "Which device or gate uses it.");
  const eventChoice = selectField("Event", [["", "Any of my events"], ...events.map((e) => /** @type {[string, string]} */ ([e.id, e.name]))],
    "A key bound to an event admits that event's tickets only.");
  const form = h("form", { class: "form" }, label.field, eventChoice.field,
    h("button", { type: "submit", class: "primary" }, "Create key"));
  const newKey = h("div", { class: "new-key" }); // the key, shown once
  const list = h("div");
  main.append(
    h("section", { "aria-labelledby": "new-key-heading" }, h("h2", { id: "new-key-heading" }, "New key"), form, newKey),
    h("section", { "aria-labelledby": "keys-heading" }, h("h2", { id: "keys-heading" }, "Keys"), list));

  async function refresh() {
    /** @type {{scanner_keys: ScannerKey[]}} */
    const { scanner_keys: keys } = await retrying(() => get("/v1/scanner-keys", { signal }), signal);
    if (keys.length === 0) {
      replace(list, h("p", {}, "No scanner keys yet."));
      return;
    }
    replace(list, h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Scanner keys, scrollable" },
      cards(h("table", {},
        h("caption", { class: "visually-hidden" }, "Scanner keys"),
        h("thead", {}, h("tr", {}, ["Label", "Event", "Created", "Status", "Action"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, keys.map((k) => keyRow(k)))))));
  }

  /**
   * @param {ScannerKey} k
   * @returns {HTMLTableRowElement}
   */
  function keyRow(k) {
    const revoke = h("button", { type: "button", class: "secondary", "aria-label": `Revoke ${k.label}` }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!window.confirm(`Revoke the key “${k.label}”? The device using it stops admitting at once.`)) return;
      revoke.disabled = true;
      try {
        await api("DELETE", `/v1/scanner-keys/${k.id}`, { signal });
        showMessage(`The key “${k.label}” is revoked.`);
        await refresh();
      } catch (err) {
        report(err);
        revoke.disabled = false;
      }
    });
    return h("tr", {},
      h("th", { scope: "row" }, k.label),
      h("td", {}, k.event_id ? eventNames.get(k.event_id) || k.event_id : "Any of my events"),
      h("td", {}, formatDateTime(k.created_at)),
      h("td", {}, k.revoked_at ? `Revoked ${formatDateTime(k.revoked_at)}` : "Active"),
      h("td", {}, k.revoked_at ? "" : revoke));
  }

  onSubmit(form, async () => {
    if (!form.reportValidity()) return;
    clearNotice();
    /** @type {{label: string, event_id?: string}} */
    const body = { label: label.input.value.trim() };
    if (eventChoice.input.value) body.event_id = eventChoice.input.value;
    try {
      /** @type {import("../api.js").Answer<import("../types.js").NewScannerKey>} */
      const { data } = await api("POST", "/v1/scanner-keys", { body, signal });
      showKey(data);
      form.reset();
      await refresh();
    } catch (err) {
      report(err);
    }
  });

  /**
   * The new key, this once, with a copy button.
   * @param {import("../types.js").NewScannerKey} k
   */
  function showKey(k) {
    const copied = h("span", { role: "status", class: "muted" });
    const copy = h("button", { type: "button", class: "secondary" }, "Copy key");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(k.key);
        copied.textContent = "Copied.";
      } catch {
        copied.textContent = "Could not copy: select the key and copy it yourself.";
      }
    });
    replace(newKey, h("div", { class: "panel key-panel" },
      h("p", {}, h("strong", {}, `The key for “${k.label}”. `), "It is shown this once: copy it to the device now."),
      h("p", {}, h("code", { class: "secret", id: "new-key-value" }, k.key)),
      h("p", {}, copy, " ", copied)));
    copy.focus();
  }

  await refresh();
}
