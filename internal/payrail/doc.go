// Package payrail is the Payrail stub: a small payment provider that Stagedoor
// charges through, served by `stagedoor payrail` on PAYRAIL_ADDR. It is a real
// HTTP server with real failure modes (latency, injected 500s, clients that go
// away mid-request), so that Stagedoor's checkout, idempotency, breaker and
// recovery code meet them in tests and on a laptop. Charges are kept in memory
// only: a restart forgets them. It is a stub; it moves no money.
//
// # Routes
//
//	POST /charges                      {"amount_cents","currency","token"} + Idempotency-Key
//	GET  /charges?idempotency_key=K    200 the charge, 404 {"error"} when there is none
//	GET  /charges                      200 {"charges":[...]} in creation order
//	GET  /healthz                      200 {"status":"ok"}
//
// A charge is a JSON object {"id","status","amount_cents","currency",
// "idempotency_key","created_at"} plus "decline_reason" when declined. The id is
// "ch_" and 32 hex digits (128 random bits); created_at is RFC 3339 in UTC.
// Errors are {"error":"..."}.
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
// A charge is made when its request arrives, whatever later happens to the
// connection: the outcome is decided and recorded before Config.Latency is
// waited, so a client that times out or disconnects during the wait still has
// its charge, findable by GET /charges?idempotency_key=K. The wait ends early when
// the client goes away; the charge stands.
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
// Replays never fail: the failure rate applies only to new charges.
//
// Bad input answers 400 and charges nothing: a missing or over-long
// Idempotency-Key, malformed JSON, unknown fields, trailing data, a body over
// 64 KiB, a missing or negative amount_cents (0 is allowed), a currency that
// is not three letters (it is upper-cased), or a missing token. Every POST
// /charges response, whatever its status, is sent no sooner than Config.Latency
// after the request is decided.
package payrail
