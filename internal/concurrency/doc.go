// Package concurrency bounds how many requests of one identity are in flight
// at once, across every instance: Stripe's "concurrent requests limiter", the
// second of its four. A rate limit says how often; this says how many at once,
// so a buyer who fires twenty slow checkouts together gets five through and
// fifteen refusals, however the rate limits stand. It knows nothing of HTTP,
// and owns the cc:* keys in Redis and nothing else.
//
// Each identity is one sorted set in Redis, under
// <prefix>cc:{<limit>:<identity>} (the hash tag keeps it in one slot of a
// Cluster): its members are lease ids, one a request in flight, and their
// scores the instant each lease expires, in ms on Redis's clock. Enter runs one
// Lua script that drops the expired leases, then adds the request's lease if
// fewer than Max are left; release removes it (ZREM: the leases given back
// while a removal is on its way to their node go together in that node's
// next, one pipelined round; each node has its own queue, so a stalled node
// holds up only its own leases). Rider does the same as a rider of the rate limiter's script (ratelimit.Rider), so that a request's
// rate limits and its lease are one round trip: with Options.Tag the key is
// <prefix>cc:{<tag>:<identity>}:<limit>, in the slot of the limiter's buckets
// of that tag. A lease lives Lease (10 s)
// and Run renews the leases of the requests still running every Lease/3, so
// only the leases of an instance that died expire, and its identities get their
// places back within Lease. The key's time to live is its newest lease's, so an
// idle identity costs no memory.
//
//	lim := concurrency.New(rdb, concurrency.Options{
//		Name: "buyer-concurrency", Max: 5, Mode: ratelimit.Enforce,
//		Prefix: "sd:", NodeOf: nodeOf, Registerer: prometheus.DefaultRegisterer, Logger: logger,
//	})
//	go lim.Run(ctx) // renews the leases of long requests
//
//	d, release := lim.Enter(r.Context(), buyerID)
//	defer release()
//	if !d.Allowed {
//		// 429, Retry-After: d.RetryAfter; d.InFlight == d.Max
//	}
//
// Buyer 8812's sixth request while five of hers are still running, on any
// instances, is refused: d.Outcome OutcomeDenied, d.InFlight 5, d.Max 5,
// d.RetryAfter 1s. It took no lease, and its release does nothing. As soon as
// one of the five ends, and calls its release, her next request passes.
//
// # Modes
//
// Each Limiter has a ratelimit.Mode, changed at run time by SetMode. Enforce
// refuses. Shadow refuses nothing, but every request takes a lease, so that the
// count is the true number in flight, and the request that Enforce would have
// refused is counted shadow_denied: the figures a switch to Enforce would give.
// Off calls no Redis at all and counts off.
//
// # When Redis cannot answer
//
// The limiter fails open: every Redis call has a deadline (50 ms) and each node
// a circuit breaker (guard.Nodes), and a request whose call fails, or whose
// node's breaker is open, goes on without a lease and is counted fail_open. An
// outage then costs microseconds a request. A call that timed out after Redis
// ran the script leaves a lease that nothing renews or releases: it counts
// against its identity until it lapses, Lease later.
//
// # Metrics
//
// stagedoor_concurrency_decisions_total{limit,decision} counts every decision
// (allowed, denied, shadow_denied, fail_open, off), and
// stagedoor_concurrency_leases{limit} is the number of leases this instance
// holds for requests in flight. The Redis calls are counted in
// stagedoor_redis_calls_total{caller="<limit>",node,result}.
package concurrency
