// Package ratelimit decides whether a request may go on, against named token
// buckets kept in Redis: one Lua script per decision, on Redis's clock, all of a
// request's buckets at once. It knows nothing of HTTP, and nothing of
// Stagedoor's own limits (internal/limits names them); it owns the rl:* keys in
// Redis and nothing else.
//
// A limit such as hold-buyer "10/1m" is a bucket of 10 tokens refilled at 10 a
// minute, one every 6 s; a missing bucket is a full one. Each bucket is one
// integer in Redis (a GCRA theoretical arrival time, in microseconds) under the
// key <prefix>rl:{hold-buyer:8812}, with a time to live that ends when the bucket
// would be full again, so an idle buyer costs no memory.
//
//	lim := ratelimit.New(rdb, ratelimit.Options{
//		Registerer: prometheus.DefaultRegisterer,
//		Limits: []ratelimit.Definition{
//			{Name: "hold-buyer", Setting: ratelimit.Setting{Limit: ratelimit.PerMinute(10), Mode: ratelimit.Enforce}},
//			{Name: "hold-organizer", Setting: ratelimit.Setting{Limit: ratelimit.PerSecond(200), Mode: ratelimit.Enforce}},
//			{Name: "login-address", Setting: ratelimit.Setting{Limit: ratelimit.PerMinute(10), Mode: ratelimit.Enforce},
//				Policy: ratelimit.Fallback},
//		},
//	})
//	d := lim.Allow(ctx,
//		ratelimit.Check{Limit: "hold-buyer", Key: "8812"},
//		ratelimit.Check{Limit: "hold-organizer", Key: "77"})
//
// Buyer 8812's first hold: d.Allowed is true and the hold-buyer Result has
// Remaining 9, ResetAfter 6s. Ten holds later, within the same second, the 11th
// is refused: d.Allowed false, d.RetryAfter 6s (less the time since the first),
// d.Violated() ["hold-buyer"], and organizer 77's bucket is not charged for it.
// For the next 6 s this instance refuses buyer 8812's holds from its denial cache
// without asking Redis. d.Tightest() picks the Result for the response headers.
//
// A Rider (rider.go) is another package's step run in the same script as a
// request's buckets (internal/concurrency's lease in flight), so that the two
// are one round trip; its key shares their slot through a Definition's Tag.
//
// Each limit has a Mode (Enforce, Shadow, Off) that SetSetting changes at run time,
// and a Policy for when Redis cannot answer: FailOpen allows, Fallback asks an
// in-process bucket of the same limit. Redis calls have a deadline and a circuit
// breaker, so an outage costs microseconds a decision. Every decision of every
// limit is counted in stagedoor_ratelimit_decisions_total{limit,decision}.
package ratelimit
