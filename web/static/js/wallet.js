// The buyer's tickets as a wallet, the pure part (no DOM; unit-tested in
// web/test/wallet.test.js): orders newest first, how a ticket looks by its
// status (a used one looks used), and an event as an iCalendar file
// (RFC 5545) for "Add to calendar".

/**
 * The orders, newest first (a copy); the same time falls back on the id.
 * @template {{id: string, created_at: string}} O
 * @param {O[]} orders
 * @returns {O[]}
 */
export function newestFirst(orders) {
  return [...orders].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * How a ticket looks: live (valid: it admits, shown as a pass) or not, and
 * the stamp across one that does not (null on a valid one).
 * @param {import("./types.js").Ticket["status"]} status
 * @returns {{live: boolean, stamp: string | null, className: string}}
 */
export function ticketLook(status) {
  switch (status) {
    case "valid": return { live: true, stamp: null, className: "ticket" };
    case "scanned": return { live: false, stamp: "Used", className: "ticket ticket-used" };
    case "refund_pending": return { live: false, stamp: "Refunding", className: "ticket ticket-used ticket-void" };
    case "refunded": return { live: false, stamp: "Refunded", className: "ticket ticket-used ticket-void" };
    case "transferred": return { live: false, stamp: "Given away", className: "ticket ticket-used ticket-void" };
    default: return { live: false, stamp: "Not valid", className: "ticket ticket-used ticket-void" };
  }
}

/** How long a calendar entry lasts: the API knows when an event starts, not when it ends. */
export const ASSUMED_HOURS = 3;

/**
 * Escapes an iCalendar TEXT value (RFC 5545 3.3.11): backslash, semicolon,
 * comma and line breaks.
 * @param {string} text
 * @returns {string}
 */
export function escapeText(text) {
  return text.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r\n|\r|\n/g, "\\n");
}

/**
 * A time as iCalendar's UTC DATE-TIME: 20260901T193000Z.
 * @param {Date} date
 * @returns {string}
 */
export function utcStamp(date) {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

const encoder = new TextEncoder();

/**
 * Folds a content line at 75 octets (RFC 5545 3.1): each following piece
 * starts with a space; a character's UTF-8 bytes are never split.
 * @param {string} line
 * @returns {string}
 */
export function foldLine(line) {
  const pieces = [];
  let piece = "";
  let octets = 0;
  for (const ch of line) {
    const n = encoder.encode(ch).length;
    const limit = pieces.length === 0 ? 75 : 74; // the space of a continuation counts
    if (octets + n > limit) {
      pieces.push(piece);
      piece = "";
      octets = 0;
    }
    piece += ch;
    octets += n;
  }
  pieces.push(piece);
  return pieces.join("\r\n ");
}

/**
 * An event as an iCalendar file (RFC 5545): one VEVENT, its times in UTC,
 * lasting ASSUMED_HOURS, its lines CRLF-ended and folded.
 * @param {{id: string, name: string, venue: string, starts_at: string}} event
 * @param {{url: string, seats: string[], now?: Date}} details url: the event's page; seats: the buyer's, in words
 * @returns {string}
 */
export function calendarFile(event, { url, seats, now = new Date() }) {
  const start = new Date(event.starts_at);
  const end = new Date(start.getTime() + ASSUMED_HOURS * 3600_000);
  const description = [seats.length === 1 ? `Your ticket: ${seats[0]}` : `Your tickets: ${seats.join("; ")}`,
    "Show the QR code of each ticket at the door (My tickets on Stagedoor)."].join("\n");
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Stagedoor//Tickets//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    "BEGIN:VEVENT",
    `UID:${event.id}@stagedoor`,
    `DTSTAMP:${utcStamp(now)}`,
    `DTSTART:${utcStamp(start)}`,
    `DTEND:${utcStamp(end)}`,
    `SUMMARY:${escapeText(event.name)}`,
    `LOCATION:${escapeText(event.venue)}`,
    `DESCRIPTION:${escapeText(description)}`,
    `URL:${url}`,
    "END:VEVENT",
    "END:VCALENDAR",
  ];
  return lines.map(foldLine).join("\r\n") + "\r\n";
}

/**
 * A file name for the event's calendar file: its name's letters and digits.
 * @param {string} name
 * @returns {string}
 */
export function calendarFileName(name) {
  const base = name.normalize("NFKD").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").toLowerCase().slice(0, 60);
  return `${base || "event"}.ics`;
}
