// Refunding tickets from the tickets page (POST /v1/orders/{id}/refund): a
// modal dialog says how much goes back to the card and which tickets stop
// admitting; confirmed, the refund is sent with one Idempotency-Key for the
// dialog (a second press after a failure sends the same), and what became of
// it, or why it was refused, is said in the buyer's words (the server's
// details name tickets by id).

import { api } from "../api.js";
import { h } from "../dom.js";
import { formatMoney, plural } from "../format.js";
import { report, showMessage } from "../notice.js";
/**
 * What a refund's confirmation needs.
 * @typedef {object} RefundAsked
 * @property {import("../types.js").Order} order
 * @property {import("../types.js").Event} event
 * @property {import("../types.js").Ticket[]} tickets
 * @property {number} amount cents
 * @property {(t: import("../types.js").Ticket) => string} where a ticket's seat in words
 * @property {() => void} redraw
 * @property {AbortSignal} signal
 */

/**
 * Asks the buyer to confirm the refund, in a modal dialog that says how much
 * goes back and which tickets stop admitting; on confirmation sends it, with
 * an Idempotency-Key of its own (kept for a second press after a failure),
 * and says what became of it.
 * @param {RefundAsked} asked
 */
export function confirmRefund({ order, event, tickets, amount, where, redraw, signal }) {
  const money = formatMoney(amount, order.currency);
  const titleId = "refund-title";
  const confirm = h("button", { type: "button", class: "primary" }, amount > 0 ? `Refund ${money}` : "Refund");
  const keep = h("button", { type: "button", class: "secondary" }, "Keep my tickets");
  const dialog = h("dialog", { class: "dialog refund-dialog", "aria-labelledby": titleId },
    h("h2", { id: titleId }, `Refund ${plural(tickets.length, "ticket")}?`),
    h("p", {}, amount > 0
      ? `${money} will go back to the card you paid with for ${event.name}.`
      : `Nothing is left to pay back for ${event.name}.`),
    h("p", {}, tickets.length === 1 ? "This ticket will no longer admit anyone:" : "These tickets will no longer admit anyone:"),
    h("ul", {}, tickets.map((t) => h("li", {}, where(t)))),
    h("p", {}, "This cannot be undone."),
    h("div", { class: "actions" }, keep, confirm));
  document.querySelector("main")?.append(dialog);
  const close = () => dialog.close();
  keep.addEventListener("click", close);
  dialog.addEventListener("close", () => dialog.remove());
  const key = crypto.randomUUID();
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    try {
      const { status } = await api("POST", `/v1/orders/${order.id}/refund`, {
        body: { ticket_ids: tickets.map((t) => t.id) }, headers: { "Idempotency-Key": key }, signal,
      });
      close();
      showMessage(status === 202
        ? `Your refund of ${money} is on its way: the payment provider has not confirmed it yet. ${tickets.length === 1 ? "The ticket no longer admits" : "The tickets no longer admit"} anyone.`
        : `Refunded: ${money} will be back on your card in a few days.`);
      redraw();
    } catch (err) {
      close();
      report(refundProblem(err));
    } finally {
      confirm.disabled = false;
    }
  });
  dialog.showModal();
  keep.focus();
}

/**
 * A refund's refusal in the buyer's words (the server's detail names tickets
 * by id).
 * @param {unknown} err
 * @returns {unknown}
 */
function refundProblem(err) {
  /** @type {Record<string, string>} */
  const words = {
    "refund-window-closed": "Refunds for this event have closed. The organizer may still help.",
    "ticket-not-refundable": "A ticket you chose can no longer be refunded: it was used at the door, given away, or refunded already. Nothing was refunded.",
    "refund-refused": "The payment provider refused the refund, so nothing was refunded. Your tickets still admit you.",
    "event-cancelled": "This event was cancelled: your money is being returned.",
  };
  const slug = /** @type {{slug?: string}} */ (err).slug || "";
  const problem = /** @type {{problem?: import("../types.js").Problem}} */ (err).problem;
  if (!problem || !words[slug]) return err;
  return { problem: { title: problem.title, detail: words[slug] } };
}
