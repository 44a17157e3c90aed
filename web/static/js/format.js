// Formatting of money, dates and durations, in the reader's own locale.

/**
 * Money: the API's prices are integer cents (hundredths of the event's
 * currency), never floating point; shown with the currency's symbol, e.g.
 * formatMoney(4500, "USD") is "$45.00".
 * @param {number} cents
 * @param {string} currency
 * @returns {string}
 */
export function formatMoney(cents, currency) {
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(cents / 100);
}

/**
 * Reads an amount typed in the currency's units ("45", "45.5", "45.50") as
 * integer cents, without floating point; NaN when it is not such an amount.
 * @param {string} text
 * @returns {number}
 */
export function toCents(text) {
  const match = /^\s*(\d{1,9})(?:[.,](\d{0,2}))?\s*$/.exec(text);
  if (!match) return NaN;
  const [, units, fraction = ""] = match;
  return Number(units) * 100 + Number(fraction.padEnd(2, "0"));
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: "short" });

/**
 * "Sep 1, 2030, 7:30 PM" from an RFC 3339 time.
 * @param {string} iso
 * @returns {string}
 */
export function formatDateTime(iso) {
  return dateTime.format(new Date(iso));
}

/**
 * "Sep 1, 2030, 7:30:05 PM": to the second, for audits.
 * @param {string} iso
 * @returns {string}
 */
export function formatDateTimeSeconds(iso) {
  return dateTimeSeconds.format(new Date(iso));
}

/**
 * "7:30 PM" from an RFC 3339 time.
 * @param {string} iso
 * @returns {string}
 */
export function formatTime(iso) {
  return timeOnly.format(new Date(iso));
}

/**
 * A countdown: "9:05" (minutes and seconds), "1:02:03" past an hour; "0:00"
 * once over. Whole seconds, rounded up (0.1 s left shows "0:01").
 * @param {number} ms
 * @returns {string}
 */
export function formatClock(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/**
 * A wait in words: "less than a second", "12 seconds", "about 3 minutes".
 * @param {number} seconds
 * @returns {string}
 */
export function formatWait(seconds) {
  if (seconds < 1) return "less than a second";
  if (seconds < 60) return `${Math.round(seconds)} second${Math.round(seconds) === 1 ? "" : "s"}`;
  const minutes = Math.round(seconds / 60);
  return `about ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/**
 * "2 seats", "1 seat".
 * @param {number} n
 * @param {string} word
 * @returns {string}
 */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * The value of an <input type="datetime-local"> ("2030-09-01T19:30", the
 * reader's local time) as an RFC 3339 time in UTC, as the API wants it.
 * @param {string} value
 * @returns {string}
 */
export function localInputToISO(value) {
  return new Date(value).toISOString();
}

/**
 * The other way: a Date as a datetime-local value in local time.
 * @param {Date} date
 * @returns {string}
 */
export function toLocalInput(date) {
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
