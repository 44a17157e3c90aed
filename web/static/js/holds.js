// The buyer's current hold of each event, remembered in this browser (the API
// has no "my holds" list): the event page draws its seats as "mine" and links
// to it. Keyed by account and event; forgotten when the hold ends.

const key = (userId, eventId) => `stagedoor.hold.${userId}.${eventId}`;

export function rememberHold(user, hold) {
  localStorage.setItem(key(user.id, hold.event_id), hold.id);
}

export function rememberedHold(user, eventId) {
  return localStorage.getItem(key(user.id, eventId));
}

export function forgetHold(user, eventId) {
  localStorage.removeItem(key(user.id, eventId));
}
