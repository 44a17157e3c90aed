// Package payrail is the Payrail stub: a small payment provider that Stagedoor
// charges through, served by `stagedoor payrail` on PAYRAIL_ADDR. It is a real
// HTTP server with real failure modes (latency and jitter, injected 500s,
// records that lag decisions, clients that go away mid-request, restarts), so
// that Stagedoor's checkout, idempotency, breaker, recovery and reconciliation
// code meet them in tests and on a laptop. It moves no money.
//
// Its ledger is durable: charges and refunds are rows in PostgreSQL (schema
// payrail of PAYRAIL_DATABASE_URL, created at start), so a restarted Payrail
// knows every charge it made. Stagedoor never touches that schema; it asks over
// HTTP, as it would a real provider. Payrail owns schema payrail and nothing of
// Stagedoor's.
//
// # Routes
//
//	POST /charges                      {"amount_cents","currency","token"} + Idempotency-Key
//	GET  /charges?idempotency_key=K    200 the charge; 404 {"error","ledger_since","complete_through"}
//	GET  /charges[?recorded_after=T&after_id=ID&limit=N]
//	                                   200 {"charges":[...],"ledger_since","complete_through"} in recording order
//	POST /charges/{id}/refunds         [{"amount_cents"}] + [Idempotency-Key]
//	                                   201 the refund; 200 it again (Idempotent-Replayed: true)
//	GET  /refunds[?created_after=T&after_id=ID&limit=N]
//	                                   200 {"refunds":[...]} in the order they were made
//	GET  /healthz                      200 {"status":"ok"}
//
// With an API key (Config.APIKey, PAYRAIL_API_KEY; `stagedoor payrail` needs
// one), every route but GET /healthz needs "Authorization: Bearer <key>", and
// answers 401 without it, having looked at nothing.
//
// A charge is a JSON object {"id","status","amount_cents","currency",
// "idempotency_key","created_at","recorded_at","refunded_cents"} plus
// "decline_reason" when declined and "refunds" (in the order they were made)
// once refunded. A refund is {"id","charge_id","idempotency_key",
// "refund_key","amount_cents","currency","created_at"}: idempotency_key is the
// charge's, refund_key the refund request's own (left out for the refund asked
// for without one). Ids are "ch_" or "re_" and 32 hex digits (128 random
// bits); times are RFC 3339 in UTC. Errors are {"error":"..."}.
//
// # Tokens
//
//   - tok_visa (TokenVisa) succeeds: 201, status "succeeded".
//   - tok_declined (TokenDeclined) declines: 402, status "declined".
//   - tok_error (TokenError) answers 500 and records nothing.
//   - any other token declines: 402, status "declined", decline_reason
//     "unknown_token". Only tok_visa ever succeeds, so the stub is predictable.
//
// # Charging rules
//
// A charge is made when its request's turn comes (at once, unless another
// request with its key is being decided), if its client is still there: a
// client that went away before then is charged nothing (a 500, which nobody
// reads). Once made, a charge stands whatever later happens to the
// connection: the outcome is decided and written to the ledger before the
// latency (Config.Latency plus up to Config.LatencyJitter) is waited, so a
// client that times out or disconnects during the wait still has its charge.
// The wait ends early when the client goes away; the charge stands.
//
// One outcome per Idempotency-Key (1 to 255 bytes), ever. The first request
// with a key that gets a 201 or a 402 fixes the outcome; every later request with
// that key, concurrent or not and whatever its body, gets that same outcome (same
// status code, same id) with the header "Idempotent-Replayed: true", and nothing
// is charged again. Declines are stored and replayed too: a declined key stays
// declined, so a client wanting another try must use a new key. GET by key
// returns a declined outcome as well; only status "succeeded" means money moved.
//
// A 500 (tok_error, or the Config.FailureRate share of new charges) makes no
// charge and records nothing, so a retry with the same key may still succeed.
// Replays never fail: the failure rate applies only to new charges. A 503 means
// the ledger could not be written or read: the outcome is unknown, and a retry
// with the same key tells.
//
// # Records, and what a lookup can promise
//
// With Config.RecordDelay, a new charge becomes visible to GET (by key, and in
// listings) only a random time after it was made, as with a provider whose
// records lag its decisions; the POST that made it and its replays see it at
// once. So "no charge with this key" is only as good as the ledger's coverage,
// which every 404 and every listing states: ledger_since (when this ledger began
// recording) and complete_through (every charge made before it is visible). A
// request whose turn came between the two and is not found made no charge; for
// any other, a 404 proves nothing. A charge's created_at is when its turn came,
// and a lookup waits for the charges being made as it starts, so what it
// vouches for is true when it answers. A client that gives up at a deadline
// thus has no charge made after it, but for the moment Payrail takes to see it
// go.
//
// # Refunds
//
// POST /charges/{id}/refunds gives part or all of a succeeded charge's amount
// back. Its body, optional, is {"amount_cents": N} (N at least 1); without
// one it refunds all that is left of the charge. Each Idempotency-Key (1 to
// 255 bytes) of a charge makes one refund, ever: the first call answers 201
// with the refund, every later one 200 with the same refund and
// "Idempotent-Replayed: true" (the same key with another amount: 422, nothing
// changes). A request without a key is the charge's one keyless refund, made
// and then replayed the same way (what every refund was before refunds could
// be partial). A charge's refunds together never pass its amount: one that
// would is 409, as is a declined charge and a keyless request when nothing is
// left; an unknown id is 404; nothing changes in each case. Refunds of one
// charge are made one at a time under a lock on its row. Like a charge, a
// refund is made when its request arrives (then the latency is waited), the
// Config.FailureRate share of new refunds answers 500 having made none, and a
// 503 means the ledger could not be written: the outcome is unknown, and the
// same key tells. A charge shows refunded_cents and its refunds in lookups
// and listings. GET /refunds lists every refund, whoever asked for it, so
// that a client learns of refunds it did not make.
//
// A payment token is never logged, nor a hash of one (a test token by its
// name, any other as "other"); the API key neither.
//
// Bad input answers 400 and charges nothing: a missing or over-long
// Idempotency-Key, malformed JSON, unknown fields, trailing data, a body over
// 64 KiB, a missing or negative amount_cents (0 is allowed), a currency that
// is not three letters (it is upper-cased), a missing token, or bad paging;
// for a refund, an over-long key or a body that is not {"amount_cents": N}
// with N at least 1.
package payrail
