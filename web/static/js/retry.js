// When to try again: what the server said (retry_after_ms, Retry-After) and,
// when it said nothing, a back-off. Pure (no DOM), so Node's tests import it.

/**
 * How long the server asked us to wait, in ms: the problem's retry_after_ms
 * when it has one (exact), else the Retry-After header (whole seconds; the
 * server sends no HTTP date), else null.
 * @param {{retry_after_ms?: unknown} | null | undefined} problem
 * @param {{get(name: string): string | null} | null | undefined} headers
 * @returns {number | null}
 */
export function retryAfterMs(problem, headers) {
  const exact = problem?.retry_after_ms;
  if (typeof exact === "number" && Number.isFinite(exact) && exact >= 0) return exact;
  const seconds = Number(headers?.get("Retry-After"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

/**
 * The wait before try number attempt + 1 when the server named none:
 * 1, 2, 4 … s, at most 30 s.
 * @param {number} attempt the tries so far, from 1
 * @returns {number} ms
 */
export function backoffMs(attempt) {
  return Math.min(30_000, 1000 * 2 ** (attempt - 1));
}
