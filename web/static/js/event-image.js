// An event's optional image: shown on its card and its page (its width and
// height given, so that the page does not move when it arrives), and the
// organizer's control that uploads (PUT /v1/organizer/events/{id}/image, the
// file itself as the body) or removes it.

import { ApiError } from "./api.js";
import { h, uid } from "./dom.js";
import { report, showMessage } from "./notice.js";

/** The largest image the server takes (2 MB). */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;
const TYPES = ["image/jpeg", "image/png", "image/webp"];

/**
 * The event's image, or null when it has none.
 * @param {import("./types.js").Event} event
 * @param {{lazy?: boolean, className?: string}} [options] lazy: below the fold
 * @returns {HTMLImageElement | null}
 */
export function eventImage(event, { lazy = false, className = "event-image" } = {}) {
  if (!event.image_url) return null;
  return h("img", {
    class: className, src: event.image_url, alt: "",
    width: event.image_width || 1600, height: event.image_height || 900,
    loading: lazy ? "lazy" : null, decoding: "async",
  });
}

/**
 * Sends the file as the event's image; the answer is the event.
 * @param {string} eventId
 * @param {Blob} file
 * @param {AbortSignal} signal
 * @returns {Promise<import("./types.js").OrganizerEvent>}
 */
async function upload(eventId, file, signal) {
  let response;
  try {
    response = await fetch(`/v1/organizer/events/${eventId}/image`, {
      method: "PUT", body: file, signal, credentials: "same-origin",
      headers: { "Content-Type": file.type, Accept: "application/json" },
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, { title: "No connection", detail: "the server could not be reached; check your connection" }, null);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(response.status, data ?? { title: "Error", detail: `the server answered ${response.status}` }, response.headers);
  }
  return data;
}

/**
 * The organizer's image control: the image now, a file field, Upload and
 * Remove. changed is called with the event as it is afterwards.
 * @param {import("./types.js").OrganizerEvent} event
 * @param {AbortSignal} signal
 * @param {(event: import("./types.js").OrganizerEvent) => void} changed
 * @returns {HTMLElement}
 */
export function imageControl(event, signal, changed) {
  const inputId = uid("image");
  const input = h("input", { type: "file", id: inputId, accept: TYPES.join(","), "aria-describedby": `${inputId}-hint` });
  const uploadButton = h("button", { type: "submit", class: "secondary" }, event.image_url ? "Replace image" : "Upload image");
  const removeButton = event.image_url ? h("button", { type: "button", class: "secondary" }, "Remove image") : null;
  const preview = eventImage(event, { lazy: true, className: "event-image event-image-preview" });
  const form = h("form", { class: "form image-form", "aria-labelledby": `${inputId}-title` },
    h("h2", { id: `${inputId}-title` }, "Image"),
    preview ?? h("p", { class: "muted" }, "This event has no image yet."),
    h("div", { class: "field" },
      h("label", { for: inputId }, "Choose an image"),
      h("p", { class: "hint", id: `${inputId}-hint` },
        "A JPEG, PNG or WebP photo of up to 2 MB, ideally wider than tall (16:9). It is shown on the event's card and page."),
      input),
    h("div", { class: "actions" }, uploadButton, removeButton));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = input.files?.[0];
    if (!file) {
      input.focus();
      showMessage("Choose an image first.");
      return;
    }
    if (!TYPES.includes(file.type)) {
      showMessage("That file is not a JPEG, PNG or WebP image. Choose a photo in one of those formats.");
      return;
    }
    if (file.size > MAX_IMAGE_BYTES) {
      showMessage("That image is larger than 2 MB. Choose a smaller one, or save it smaller first.");
      return;
    }
    uploadButton.disabled = true;
    try {
      const updated = await upload(event.id, file, signal);
      showMessage("The image is saved.");
      changed(updated);
    } catch (err) {
      report(err);
    } finally {
      uploadButton.disabled = false;
    }
  });
  removeButton?.addEventListener("click", async () => {
    removeButton.disabled = true;
    try {
      const response = await fetch(`/v1/organizer/events/${event.id}/image`, { method: "DELETE", signal, credentials: "same-origin" });
      if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({ title: "Error" })), response.headers);
      showMessage("The image is removed.");
      changed({ ...event, image_url: null });
    } catch (err) {
      report(err);
    } finally {
      removeButton.disabled = false;
    }
  });
  return form;
}
