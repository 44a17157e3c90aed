// Giving a ticket to a friend (POST /v1/tickets/{id}/transfer), from the
// tickets page: a dialog asks for the friend's email, then for a
// confirmation. The ticket moves to the friend's account with a new code, and
// this one stops admitting at once; a refusal is said in the buyer's words
// (boxoffice-words.js) in the dialog, which goes back to the email.

import { ApiError, api } from "../api.js";
import { field, h, isAbort } from "../dom.js";
import { isOwnEmail, transferRefusalWords } from "../boxoffice-words.js";
import { go } from "../router.js";
import { currentUser, sessionEnded } from "../session.js";

/**
 * The button that opens the transfer dialog of a valid ticket.
 * @param {import("../types.js").Ticket} ticket
 * @param {string} what the ticket in words: its seat and event
 * @returns {HTMLButtonElement}
 */
export function transferButton(ticket, what) {
  const button = h("button", { type: "button", class: "secondary no-print", "aria-label": `Give to a friend: ${what}` }, "Give to a friend");
  button.addEventListener("click", () => openTransfer(ticket.id, what, button));
  return button;
}

/**
 * The refusal an error of api() is, as boxoffice-words.js reads it.
 * @param {unknown} err
 * @returns {import("../boxoffice-words.js").TransferRefusal}
 */
function refusalOf(err) {
  if (!(err instanceof ApiError)) return { status: 0, slug: "" };
  return { status: err.status, slug: err.slug, ticketStatus: err.problem.ticket_status, retryAfterMs: err.retryAfterMs };
}

/**
 * Opens the dialog for one ticket; closing it removes it and gives the focus
 * back to the button that opened it.
 * @param {string} ticketID
 * @param {string} what
 * @param {HTMLButtonElement} opener
 */
function openTransfer(ticketID, what, opener) {
  const email = field("Your friend's email", {
    type: "email", required: true, maxlength: 254, autocomplete: "off", autocapitalize: "none", spellcheck: "false",
  }, "The email of their Stagedoor account. If they have none, ask them to sign up first.");
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const ask = h("form", { class: "form" },
    h("p", {}, "The ticket moves to your friend's account with a new code. Your code and QR code stop working at once."),
    email.field,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Continue"), cancel));
  const question = h("p", { class: "lead" });
  const give = h("button", { type: "button", class: "primary" }, "Give the ticket");
  const back = h("button", { type: "button", class: "secondary" }, "Back");
  const confirm = h("div", { hidden: true }, question,
    h("p", {}, "You cannot take it back yourself: only your friend could give it back to you."),
    h("div", { class: "actions" }, give, back));
  const error = h("p", { class: "dialog-error", role: "alert" });
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": "transfer-title" },
    h("h2", { id: "transfer-title" }, "Give this ticket to a friend"),
    h("p", { class: "muted" }, what),
    ask, confirm, error);

  /** @param {string} words shown as the refusal, and the email asked again */
  const askAgain = (words) => {
    error.textContent = words;
    confirm.hidden = true;
    ask.hidden = false;
    email.input.focus();
  };
  cancel.addEventListener("click", () => dialog.close());
  back.addEventListener("click", () => askAgain(""));
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener.isConnected) opener.focus();
  });
  ask.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!ask.reportValidity()) return;
    const typed = email.input.value.trim();
    if (isOwnEmail(typed, currentUser()?.email ?? "")) {
      askAgain("That is your own email: enter your friend's.");
      return;
    }
    error.textContent = "";
    question.textContent = `Give ${what} to ${typed}?`;
    ask.hidden = true;
    confirm.hidden = false;
    give.focus();
  });
  give.addEventListener("click", async () => {
    const typed = email.input.value.trim();
    give.disabled = back.disabled = true;
    try {
      await api("POST", `/v1/tickets/${encodeURIComponent(ticketID)}/transfer`, { body: { email: typed } });
      dialog.close();
      go("/tickets", `Your ticket (${what}) now belongs to ${typed}, who will find it under My tickets.`);
    } catch (err) {
      if (isAbort(err)) return;
      if (err instanceof ApiError && err.status === 401) {
        dialog.close();
        sessionEnded();
        go(`/login?next=${encodeURIComponent("/tickets")}`, "Please log in to continue.");
        return;
      }
      askAgain(transferRefusalWords(refusalOf(err)));
    } finally {
      give.disabled = back.disabled = false;
    }
  });

  opener.closest("main")?.append(dialog);
  dialog.showModal();
  email.input.focus();
}
