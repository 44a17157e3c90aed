// Buyer words: what the pages say about each problem the API answers, in words
// for the person in front of them, not the developer. Every problem type of the
// contract (docs/openapi.yaml, components.x-problem-types) has an entry here
// (web/test/buyer-words.test.js checks it): a short title, what happened and
// what to do, with the numbers the problem carries (Retry-After, the seats
// held, the hold's time left), and the help page (pages/help.js) for its
// situation. The API's `detail` is for developers and is never shown: it may
// name a limit, an Idempotency-Key or an id. Pure (no DOM), so Node's tests
// import it.

import { formatClock, formatTime, plural } from "./format.js";

/** @typedef {import("./types.js").Problem} Problem */

/**
 * A help page for people (#/help/{topic}, pages/help.js).
 * @typedef {"held-seats" | "waiting-room" | "busy" | "payment"} HelpTopic
 */

/**
 * What the page knows besides the problem.
 * @typedef {object} WordsContext
 * @property {number | null} [retryAfterMs] when the server said to try again (ApiError.retryAfterMs)
 * @property {string} [holdExpiresAt] the buyer's hold's end (RFC 3339), for "still held for 8:12"
 * @property {number} [now] the time now in ms since the epoch (tests set it)
 */

/**
 * A problem in a buyer's words.
 * @typedef {object} BuyerWords
 * @property {string} title what happened, short ("Your card was declined")
 * @property {string} text more of what happened, and what to do when the page says nothing else
 * @property {string} [todo] what to do, when a page may say it its own way
 *   (showProblem's extra takes its place)
 * @property {HelpTopic | null} help the help page for the situation
 */

/**
 * Everything a problem carries, loosely: the contract's members beyond types.js's.
 * @typedef {Problem & {max_held_seats?: number, seats_held?: number, max_in_flight?: number,
 *   cooldown_seat_ids?: string[], bound?: string}} AnyProblem
 */

/**
 * An entry of the table: the problem and the context in, words out.
 * @typedef {(p: AnyProblem, c: WordsContext) => BuyerWords} Wording
 */

/**
 * "Try again in about a minute": when the server said, in words.
 * @param {number | null | undefined} ms
 * @returns {string}
 */
export function retryWords(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) return "Try again in a moment.";
  const s = ms / 1000;
  if (s <= 1.5) return "Try again in a second.";
  if (s < 10) return "Try again in a few seconds.";
  if (s < 45) return `Try again in about ${Math.round(s / 5) * 5} seconds.`;
  if (s < 90) return "Try again in about a minute.";
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `Try again in about ${minutes} minutes.`;
  const hours = Math.round(minutes / 60);
  return `Try again in about ${hours === 1 ? "an hour" : `${hours} hours`}.`;
}

/**
 * "your seats are still held for 8:12", or without the time when the page did
 * not say when the hold ends (or it has ended by the clock).
 * @param {WordsContext} c
 * @returns {string}
 */
export function stillHeld(c) {
  if (c.holdExpiresAt) {
    const left = Date.parse(c.holdExpiresAt) - (c.now ?? Date.now());
    if (left > 0) return `your seats are still held for ${formatClock(left)}`;
  }
  return "your seats are still held";
}

/**
 * The first letter in capitals.
 * @param {string} s
 * @returns {string}
 */
function capital(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** @type {Record<string, string>} */
const scanWords = {
  already_scanned: "Already scanned",
  wrong_event: "Ticket for another event",
  revoked: "Ticket cancelled",
  invalid: "Unknown ticket",
  conflict: "Not admitted",
};

/** @type {Record<string, string>} */
const notTransferable = {
  scanned: "It was already used at the door.",
  transferred: "It was already given to someone else.",
  revoked: "It was cancelled: its order was refunded, or the organizer withdrew it.",
};

/**
 * The words of every problem type of the contract, by its slug.
 * @type {Record<string, Wording>}
 */
export const BUYER_WORDS = {
  "image-too-large": () => ({
    title: "That picture is too large",
    text: "Pictures can be up to 2 MB. Choose a smaller one, or save it smaller, and upload it again.",
    help: null,
  }),
  "unsupported-image-type": () => ({
    title: "That kind of file can't be used",
    text: "Upload a JPEG, PNG or WebP picture.",
    help: null,
  }),
  "invalid-request": (p) => ({
    title: "Please check the form",
    text: formWords(p.detail),
    help: null,
  }),
  unauthorized: () => ({
    title: "Please log in",
    text: "You're not logged in, or your session has ended. Log in and try again.",
    help: null,
  }),
  "invalid-credentials": () => ({
    title: "Wrong email or password",
    text: "That email and password don't match an account. Check them and try again.",
    help: null,
  }),
  forbidden: () => ({
    title: "Not allowed",
    text: "Your account can't do this. If you have another account for it, log in with that one.",
    help: null,
  }),
  "invalid-queue-token": () => ({
    title: "Your place in the queue was lost",
    text: "We couldn't confirm your place in the waiting room. Reload the page to join the queue again.",
    help: "waiting-room",
  }),
  "not-admitted": () => ({
    title: "It's not your turn yet",
    text: "This sale has a waiting room.",
    todo: "Join the queue: when it's your turn, you can choose seats.",
    help: "waiting-room",
  }),
  "not-found": () => ({
    title: "Not found",
    text: "We couldn't find that. It may have been removed, or the link may be wrong.",
    help: null,
  }),
  "no-waiting-room": () => ({
    title: "No waiting room",
    text: "This sale has no waiting room: reload the page and choose your seats right away.",
    help: null,
  }),
  "method-not-allowed": () => ({
    title: "That didn't work",
    text: "Nothing was done. Reload the page and try again.",
    help: null,
  }),
  "request-timeout": () => ({
    title: "That took too long",
    text: "What you sent didn't arrive in time, so nothing was done. Check your connection and try again.",
    help: null,
  }),
  "email-taken": () => ({
    title: "This email already has an account",
    text: "Log in instead, or sign up with another email.",
    help: null,
  }),
  "recipient-not-found": () => ({
    title: "No account with that email",
    text: "Nobody has a buyer account with that email, so the ticket is still yours. Check the spelling, or ask your friend to sign up first.",
    help: null,
  }),
  "ticket-not-transferable": (p) => ({
    title: "This ticket can't be given away",
    text: `${(p.ticket_status && notTransferable[p.ticket_status]) || "It is no longer valid."} Nothing changed.`,
    help: null,
  }),
  "seats-unavailable": (p) => {
    const n = p.unavailable_seat_ids?.length ?? 0;
    return {
      title: "Seats taken",
      text: `${n > 1 ? `${n} of the seats you chose are` : n === 1 ? "One of the seats you chose is" : "Some of those seats are"} held or bought by someone else, so nothing was held.`,
      todo: "Choose other seats.",
      help: "held-seats",
    };
  },
  "too-many-seats-held": (p) => {
    const max = p.max_held_seats;
    const held = p.seats_held;
    const most = typeof max === "number" ? `You can hold at most ${plural(max, "seat")} of this event at once` : "You can't hold more seats of this event at once";
    const now = typeof held === "number" ? `, and you hold ${held} already` : "";
    return {
      title: "Too many seats held",
      text: `${most}${now}. Pay for the seats you hold, or give some back, then choose again.`,
      help: "held-seats",
    };
  },
  "not-on-sale": () => ({
    title: "Not on sale yet",
    text: "Tickets for this event aren't on sale yet. Come back when the sale opens.",
    help: null,
  }),
  "sold-out": (p) => {
    const parts = (p.sold_out_sections ?? []).map((s) => s.available === 0
      ? `${s.section} is sold out.` : `${s.section} has only ${plural(s.available, "place")} left.`);
    return {
      title: "Sold out",
      text: `${parts.length ? `${parts.join(" ")} ` : ""}Nothing was held.`,
      todo: "Places given back go on sale again: ask for fewer, or try again later.",
      help: "held-seats",
    };
  },
  "rehold-cooldown": (p, c) => ({
    title: "Wait a moment for these seats",
    text: "",
    todo: `You gave them back moments ago, so others get a fair chance at them first. Choose other seats now, or hold these again soon: ${retryWords(c.retryAfterMs ?? p.retry_after_ms).toLowerCase()}`,
    help: "held-seats",
  }),
  "event-started": () => ({
    title: "The event has started",
    text: "Tickets are no longer sold for it, and nothing was charged.",
    help: null,
  }),
  "event-cancelled": () => ({
    title: "This event was cancelled",
    text: "Its organizer cancelled it: nothing was charged, and paid orders are refunded.",
    help: null,
  }),
  "change-breaks-tickets": () => ({
    title: "That change would break sold tickets",
    text: "Tickets are sold already: the refund deadline can move later but not earlier or away, and the start can't move before it. Nothing changed.",
    help: null,
  }),
  "refund-window-closed": () => ({
    title: "Refunds have closed",
    text: "The last day for refunds of this event has passed, or it offers none. Ask its organizer: they can still refund you.",
    help: "payment",
  }),
  "ticket-not-refundable": (p) => {
    const n = p.not_refundable_ticket_ids?.length ?? 0;
    return {
      title: "This can't be refunded",
      text: `${n > 0 ? `${n === 1 ? "One ticket" : `${n} tickets`} can't be refunded: used at the door, given to someone, or refunded already.` : "Nothing of this order is left to refund."} Nothing was refunded.`,
      help: "payment",
    };
  },
  "refund-refused": () => ({
    title: "The refund was refused",
    text: "The payment provider refused it: nothing was refunded, and your tickets still work. Try again later, or ask the organizer.",
    help: "payment",
  }),
  "hold-not-active": () => ({
    title: "Your seats are no longer held",
    text: "The hold's time ran out, or its seats were given back or bought already. Choose seats again.",
    help: "held-seats",
  }),
  "order-released": () => ({
    title: "The payment didn't go through",
    text: "We couldn't confirm it, so the seats went back on sale. Nothing stays charged: a late charge is refunded. Choose seats again to buy.",
    help: "payment",
  }),
  "order-refunded": () => ({
    title: "This order was refunded",
    text: "Its tickets no longer admit anyone. Choose seats again to buy.",
    help: "payment",
  }),
  "idempotency-in-progress": () => ({
    title: "Still working on it",
    text: "Your earlier request is still being handled. Wait a moment, then look again.",
    help: "payment",
  }),
  "scan-rejected": (p) => ({
    title: (p.result && scanWords[p.result]) || "Not admitted",
    text: p.result === "already_scanned" && p.first_scanned_at
      ? `This ticket was let in at ${formatTime(p.first_scanned_at)}. Don't admit it again.`
      : "Don't admit this ticket.",
    help: null,
  }),
  "payment-declined": (_p, c) => ({
    title: "Your card was declined",
    text: "",
    todo: `Try another card — ${stillHeld(c)}.`,
    help: "payment",
  }),
  "idempotency-mismatch": () => ({
    title: "That didn't go through",
    text: "Nothing was done or charged. Reload the page and try again.",
    help: "payment",
  }),
  "rate-limited": (p, c) => ({
    title: "Too many tries in a short time",
    text: "",
    todo: `Please wait a little. ${retryWords(c.retryAfterMs ?? p.retry_after_ms)}`,
    help: "busy",
  }),
  "too-many-concurrent-requests": (p, c) => ({
    title: "Too much at once",
    text: `You have ${typeof p.max_in_flight === "number" ? `${p.max_in_flight} things` : "several things"} loading already (other tabs count too).`,
    todo: retryWords(c.retryAfterMs ?? p.retry_after_ms),
    help: "busy",
  }),
  "internal-error": () => ({
    title: "Something went wrong on our side",
    text: "It's not your fault. Try again in a moment; if it keeps happening, tell the organizer.",
    help: null,
  }),
  "service-overloaded": (_p, c) => ({
    title: "We're very busy right now",
    text: "Nothing was done.",
    todo: retryWords(c.retryAfterMs),
    help: "busy",
  }),
  "service-unavailable": (_p, c) => ({
    title: "We couldn't finish that",
    text: "Part of Stagedoor didn't answer, so it may not have happened.",
    todo: `It's safe to do it again. ${retryWords(c.retryAfterMs)}`,
    help: "busy",
  }),
  "payment-unavailable": (_p, c) => ({
    title: "Payments aren't working for a moment",
    text: "Nothing was charged.",
    todo: `${capital(stillHeld(c))}. ${retryWords(c.retryAfterMs)} Or choose another card.`,
    help: "payment",
  }),
};

/**
 * A problem's kind: "/problems/rate-limited" → "rate-limited"; "" for none.
 * @param {Problem} p
 * @returns {string}
 */
export function slugOf(p) {
  const type = typeof p.type === "string" ? p.type : "";
  return type.startsWith("/problems/") ? type.slice("/problems/".length) : "";
}

/**
 * A problem in a buyer's words. A problem the page made itself (no type: no
 * connection, a payment not completed) is in its words already and is shown as
 * it is; a type this table lacks gets its title and a general sentence, never
 * the developer's detail.
 * @param {AnyProblem} p
 * @param {WordsContext} [c]
 * @returns {BuyerWords}
 */
export function buyerWords(p, c = {}) {
  const slug = slugOf(p);
  const wording = Object.hasOwn(BUYER_WORDS, slug) ? BUYER_WORDS[slug] : undefined;
  if (wording) return wording(p, c);
  if (!p.type) return { title: p.title || "Something went wrong", text: sentence(p.detail || ""), help: null };
  return { title: p.title || "Something went wrong", text: "Please try again in a moment.", help: null };
}

/**
 * "the server could not be reached" → "The server could not be reached."
 * @param {string} s
 * @returns {string}
 */
function sentence(s) {
  if (!s) return "";
  const t = capital(s);
  return /[.!?]\)?$/.test(t) ? t : `${t}.`;
}

/**
 * The event forms' fields as their labels read (organizer-events.js,
 * organizer-event.js), by the API's names.
 * @type {Record<string, string>}
 */
export const FIELD_LABELS = {
  name: "Name",
  venue: "Venue",
  description: "Description",
  starts_at: "Starts at",
  on_sale_at: "On sale from",
  refunds_until: "Buyers may refund until",
  currency: "Currency",
  sections: "Sections",
  price_cents: "Price",
  rows: "Rows",
  seats_per_row: "Seats per row",
  capacity: "Places",
  general_admission: "Kind",
  "waiting_room.admit_per_second": "Buyers admitted per second",
  admit_per_second: "Buyers admitted per second",
  email: "Email",
  password: "Password",
};

/**
 * Rules the API checks of an event, in the form's words: the detail's pattern
 * and its sentence ($1… are the pattern's groups, already in words).
 * @type {[RegExp, string][]}
 */
const formRules = [
  [/^on_sale_at must not be after starts_at/, "The sale can't open after the show starts."],
  [/^refunds_until must not be after starts_at/, "Refunds can't close after the show starts."],
  [/^starts_at must not be before on_sale_at/, "The show can't start before the sale opens."],
  [/^starts_at must be in the future/, "The start must be in the future."],
  [/^refunds_until must be in the future/, "The last day for refunds must be in the future."],
  [/^starts_at is required/, "Give the start's date and time."],
  [/^currency .* must be an ISO 4217 code/, "The currency is three capital letters, such as USD or EUR."],
  [/^sections must list at least one section/, "Add at least one section."],
  [/^an event has at most (\d+) sections/, "An event has at most $1 sections."],
  [/^the sections hold (\d+) seats and places; an event has at most (\d+)/, "The sections hold $1 seats and places, and an event can have at most $2. Make some smaller."],
  [/^sections\[(\d+)\]\.name .* is used by another section/, "Section $1's name is used by another section: give each section its own name."],
  [/^sections\[(\d+)\]\.price_cents must be between 0 and (\d+)/, "Section $1's price is too high."],
  [/^sections\[(\d+)\]\.capacity must be between 1 and (\d+)/, "Section $1 has between 1 and $2 places."],
  [/^sections\[(\d+)\]\.rows must be between 1 and (\d+)/, "Section $1 has between 1 and $2 rows."],
  [/^sections\[(\d+)\]\.seats_per_row must be between 1 and (\d+)/, "Section $1 has between 1 and $2 seats per row."],
  [/^sections\[(\d+)\] is of general admission/, "Section $1 is of general admission: give its number of places, not rows and seats per row."],
  [/^sections\[(\d+)\] is seated/, "Section $1 has seats in rows: give its rows and seats per row, not a number of places."],
  [/^waiting_room\.admit_per_second must be between (\d+) and (\d+)/, "Buyers admitted per second is between $1 and $2."],
];

/**
 * An invalid request's detail in the form's words: a known rule as a
 * sentence ("The sale can't open after the show starts."), else the detail
 * with each field name as its label ("Venue must not be empty."). Section
 * numbers count from 1, as the form's legends do.
 * @param {string | undefined} detail
 * @returns {string}
 */
export function formWords(detail) {
  if (!detail) return "Something in the form isn't right. Check it and try again.";
  const d = detail.replace(/sections\[(\d+)\]/g, (_m, i) => `sections[${Number(i) + 1}]`);
  for (const [pattern, words] of formRules) {
    const m = pattern.exec(d);
    if (m) return words.replace(/\$(\d)/g, (_x, i) => m[Number(i)] ?? "");
  }
  // Only a detail about a field of the form is shown, its names as labels:
  // any other is a developer's (a header, a page's bug) and is not.
  let named = false;
  const labelled = d
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "it")
    .replace(/sections\[(\d+)\]\.?([a-z_]*)/g, (_m, i, f) => {
      named = true;
      return `Section ${i}${f ? `'s ${(FIELD_LABELS[f] || f).toLowerCase()}` : ""}`;
    })
    .replace(/\b[a-z]+(?:_[a-z]+)+(?:\.[a-z_]+)?\b|\b(?:name|venue|description|currency|sections|rows|capacity|email|password)\b/g,
      (f) => {
        if (!FIELD_LABELS[f]) return f;
        named = true;
        return `“${FIELD_LABELS[f]}”`;
      });
  return named ? sentence(labelled) : "Something in the form isn't right. Check it and try again.";
}
