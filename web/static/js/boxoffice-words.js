// The box office in words: what a refused transfer means to the buyer who
// tried it (the tickets page's dialog), and a ticket's state as its event's
// organizer reads it (the orders page). Pure, so that Node tests it.

import { formatWait } from "./format.js";
import { placeName as generalName } from "./places.js";

/**
 * A refusal of POST /v1/tickets/{id}/transfer, as the page knows it.
 * @typedef {object} TransferRefusal
 * @property {number} status the HTTP status; 0 when no answer came
 * @property {string} slug the problem's slug ("recipient-not-found", …); "" for none
 * @property {string} [ticketStatus] ticket-not-transferable: why (scanned, transferred, revoked)
 * @property {number | null} [retryAfterMs] rate-limited: when a try would be allowed
 */

/**
 * What a refused transfer means, in a buyer's words: never a limit's name, an
 * id or a status code.
 * @param {TransferRefusal} r
 * @returns {string}
 */
export function transferRefusalWords(r) {
  switch (r.slug) {
    case "recipient-not-found":
      return "No Stagedoor buyer account uses this email. Check the spelling, or ask your friend to sign up with this email first.";
    case "ticket-not-transferable":
      if (r.ticketStatus === "scanned") return "This ticket was already used at the door, so it can no longer be given away.";
      if (r.ticketStatus === "transferred") return "This ticket was already given away.";
      return "This ticket no longer admits anyone (it was refunded or cancelled), so it cannot be given away.";
    case "not-found":
      return "This ticket is no longer in your account. Reload the page to see your tickets.";
    case "invalid-request":
      return "Check the email: it must be the email of your friend's account, such as name@example.com, not your own.";
    case "rate-limited": {
      const wait = r.retryAfterMs ? `in ${formatWait(r.retryAfterMs / 1000)}` : "later";
      return `You have tried to give tickets away many times in a short while. You can try again ${wait}.`;
    }
    case "too-many-concurrent-requests":
      return "Stagedoor is still busy with your other requests. Try again in a moment.";
  }
  if (r.status === 0 || r.status >= 500) {
    return "We could not reach Stagedoor, so we cannot tell whether the ticket moved. Close this and reload your tickets to see where it stands.";
  }
  return "The ticket could not be given away. Reload the page and try again.";
}

/**
 * Whether an email is the buyer's own, as the server compares them (case and
 * surrounding space aside), so that the page can say so before asking.
 * @param {string} typed
 * @param {string} own
 * @returns {boolean}
 */
export function isOwnEmail(typed, own) {
  return typed.trim().toLowerCase() === own.trim().toLowerCase();
}

/**
 * A ticket of an order, as its organizer reads it: its state, and who holds
 * it when that is not the order's buyer.
 * @param {{status: string, holder_email: string}} ticket
 * @param {string} buyerEmail the order's buyer
 * @returns {string}
 */
export function organizerTicketWords(ticket, buyerEmail) {
  const words = {
    valid: "Valid",
    scanned: "Checked in",
    refunded: "Refunded",
    transferred: "Given away",
  }[ticket.status] || ticket.status;
  return ticket.holder_email === buyerEmail ? words : `${words}, held by ${ticket.holder_email}`;
}

/**
 * Where a ticket admits: "Stalls, row A, seat 3", or "General admission ·
 * Lawn" for a place of general admission (no row), as every page says it.
 * @param {{section: string, row: string, number: number}} seat
 * @returns {string}
 */
export function placeName(seat) {
  return seat.row ? `${seat.section}, row ${seat.row}, seat ${seat.number}` : generalName(seat.section);
}
