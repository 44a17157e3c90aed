// A ticket's short reference (internal/scan/reference.go): 10 characters of
// Crockford's base32 (0-9 and A-Z without I, L, O, U), printed under its QR
// code grouped as 7KQ4-0M2X-9P, and typed at the door when the code cannot be
// scanned. Typed, it is read as the server reads it: either case, hyphens and
// spaces dropped, I and L as 1, O as 0.

export const REFERENCE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const REFERENCE_LENGTH = 10;

/**
 * The reference a typed text means, or null when it is not one (a ticket's
 * code is far longer).
 * @param {string} typed
 * @returns {string | null}
 */
export function normalizeReference(typed) {
  const text = typed.trim();
  if (text.length > 3 * REFERENCE_LENGTH) return null;
  let out = "";
  for (let ch of text.toUpperCase()) {
    if (ch === "-" || ch === " ") continue;
    if (ch === "I" || ch === "L") ch = "1";
    else if (ch === "O") ch = "0";
    if (!REFERENCE_ALPHABET.includes(ch)) return null;
    out += ch;
  }
  return out.length === REFERENCE_LENGTH ? out : null;
}

/**
 * A reference grouped as people read it: 7KQ4-0M2X-9P.
 * @param {string} ref
 * @returns {string}
 */
export function showReference(ref) {
  return ref.length === REFERENCE_LENGTH ? `${ref.slice(0, 4)}-${ref.slice(4, 8)}-${ref.slice(8)}` : ref;
}
