// The buyer's current hold of each event, remembered in this browser (the API
// has no "my holds" list): the event page draws its seats as "mine" and links
// to it. Keyed by account and event; forgotten when the hold ends.

/** @typedef {import("./types.js").Principal} Principal */

/**
 * @param {string} userId
 * @param {string} eventId
 */
const key = (userId, eventId) => `stagedoor.hold.${userId}.${eventId}`;

/**
 * Remembers the hold as the buyer's current one of its event.
 * @param {Principal} user
 * @param {import("./types.js").Hold} hold
 */
export function rememberHold(user, hold) {
  localStorage.setItem(key(user.id, hold.event_id), hold.id);
}

/**
 * The id of the buyer's remembered hold of the event, or null.
 * @param {Principal} user
 * @param {string} eventId
 * @returns {string | null}
 */
export function rememberedHold(user, eventId) {
  return localStorage.getItem(key(user.id, eventId));
}

/**
 * Forgets the buyer's hold of the event.
 * @param {Principal} user
 * @param {string} eventId
 */
export function forgetHold(user, eventId) {
  localStorage.removeItem(key(user.id, eventId));
}
