// Package waitroom is the on-sale waiting room: the rate limit on entry to the
// flow itself. An event created with waiting_room.admit_per_second admits its
// buyers one at a time, in queue order, at most that many a second; holds on
// the event need a current admission. It knows nothing of HTTP. It owns the
// wr:* keys in Redis and no table, and never writes the limiter's keys.
//
// # State
//
// A room is three Redis keys under the configured prefix, with the event id as
// a hash tag so that a Cluster keeps them in one slot and one script can use
// them all:
//
//	<prefix>wr:{<event>}:q  sorted set, buyer id → queue score
//	<prefix>wr:{<event>}:s  hash: n (buyers admitted, in queue order), last
//	                         (the tick of the last admission), d (admitted
//	                         buyers removed since: they joined again), x
//	                         (the keys' expiry as last set, ms) and the
//	                         schedule: t0, k0, r, p (see Operating a live room)
//	<prefix>wr:{<event>}:w  hash, buyer id → when she was admitted, µs
//
// Every operation is one Lua script on Redis's clock (redis.call('TIME')), so
// instances never disagree and their clocks do not matter. The keys expire
// when the last buyer in the queue would have been admitted, plus the
// admission length, plus one to two margins: a script that writes and finds
// that the keys must live longer than x sets every key to expire a margin
// later than it must (and keeps that in x), so that most writes, a join into
// a long queue among them, set no expiry at all (each key's expiry is a
// command of its own, replicated; an early join writes the queue alone). No
// key outlives the room's use by more than two margins, and an abandoned room
// costs nothing.
//
// # Order
//
// A buyer who joins before on_sale_at gets a random score in [0, 1), drawn
// once: before the sale the early joiners are a lottery, not a race to the
// endpoint. A buyer who joins later gets her join time in µs since 1970 (at
// least 1 µs more than the highest score), so she is behind every early joiner
// and every earlier late joiner. Joining again changes nothing: the score is
// kept, and with it her place. Since no early joiner can arrive once the sale
// opens and late joiners only arrive at the end, the queue's order never
// changes once admissions begin: a buyer's rank only shrinks.
//
// # Admissions
//
// Admissions are computed lazily, whenever any buyer joins or asks, by
// walking the queue from rank n. With one admission every 1/rate seconds (on
// the room's schedule: see Operating a live room), the
// buyer at rank r is admitted at
//
//	A(r) = max(A(r−1) + 1/rate, joined(r)),   A(−1) = on_sale_at
//
// where joined(r) is on_sale_at for an early joiner. Early joiners are therefore
// admitted at on_sale_at + (r+1)/rate: after t seconds of sale, exactly
// min(queued, ⌊t·rate⌋) of them. In any window, at most one admission per
// 1/rate seconds (plus the one at its start) is ever made, whenever the buyers
// arrive. The walk records A(r) for each buyer it admits, so her admission
// lasts from that moment (not from when she next looks) for the admission
// length (15 minutes in production), and after that she cannot hold.
//
// The simpler rule, admitted = min(queued, ⌊(now − on_sale_at)·rate⌋), was
// rejected: it lets unused admissions pile up, so a herd that arrives an hour
// into the sale would be let in all at once, which is what the room is for
// preventing. Times are kept in ticks of 1/rate µs since on_sale_at, so one
// admission is exactly 10⁶ ticks and the arithmetic of early joiners is exact.
// One walk admits at most maxSteps buyers; a longer backlog is caught up by
// the next calls (it can only admit later, never earlier).
//
// # Reporting
//
// A waiting buyer's position is 1 + the number of waiting buyers ahead of her.
// Her estimated wait is exact, not a guess: once the walk has caught up with
// now, everyone ahead of her is already waiting, so she is admitted at
// last + (position)/rate. Before on_sale_at the position is her place in the
// lottery so far, and later early joiners may still be drawn ahead of her.
//
// # After an admission
//
// A buyer whose admission lapsed is no longer in the queue: Status answers
// errkind.NotFound, CheckAdmitted ErrNotAdmitted, and Join puts her at the back as
// a new late joiner (her old entry is removed, and n with it, so nobody else
// moves relative to the admissions). An admission gates placing holds only: a
// hold placed while admitted lives its own time and may be checked out after
// the admission ends.
//
// # Polls without Redis
//
// Once the lottery is drawn (Redis's clock at on_sale_at or later) nobody is
// ever queued ahead of a buyer: her rank counting every buyer ever admitted
// (her rank in the queue + d) and with it the moment of her admission, A(r),
// never change, since everyone ahead of her has joined and the walk's
// arithmetic depends on nothing else. Her position at any moment is then the
// number of admission slots of 1/rate between now and A(r), and her wait
// A(r) − now: the script's own answer, from two numbers. Every answer carries
// them in Status.Place, which internal/queuetoken signs into the buyer's
// queue token, and Poll answers a poll from the token and the room's
// progress (Redis's clock, the queue's length), which each instance reads
// once per ProgressMaxAge (100 ms) for all its callers. A poll costs a call
// only without a token, or with one made before the draw once her turn is
// within LookupHorizon (her rank was not final then): those calls are made
// together, one call for every buyer the instance is asking about meanwhile.
// Until then a token made before the draw gives an estimate: her place when
// she last asked, plus each early joiner since with the chance of her
// lottery score (theirs are drawn alike), to a few hundred places in a
// million; so the lottery's buyers are asked about at the admission rate,
// not all when the sale opens.
//
// # Operating a live room
//
// Time in the room runs in ticks, 10⁶ to an admission, on a schedule kept
// with its state: from t0 (µs) at tick k0, r admissions a second, or none
// while p (paused). It starts as t0 = on_sale_at, k0 = 0, r = the event's
// rate, so that tick = (now − on_sale_at)·rate as above, and is kept from the
// room's first write on. Change (an organizer's or the admin's pause,
// resume or new rate) runs in the same script as everything else: it walks
// the admissions due under the old schedule first, then starts the new one
// at Redis's now with k0 the tick reached, so that ticks run on without a
// jump: nobody is admitted early or twice, the interval running when the
// room paused is carried over, and a waiting buyer's Place.Tick, the tick
// of her turn, stays true. Every instance admits by the change at once (the
// room is one), and answers its polls by it at its next progress read
// (within ProgressMaxAge): a paused buyer is told she waits, with her
// position and no estimate. An admission is recorded as the moment it
// began, not a tick, since the schedule of a past tick is not kept; a
// token made before a change whose turn came before it is asked about once.
// Admitted buyers keep their admissions through a pause. The event's own
// rate stays the one the room opened at; a room idle past its keys' expiry
// opens again at it. A paused room keeps its keys for a week of no writes.
//
// # When the sale is over
//
// The room knows nothing of seats; Status.Over tells a buyer's status with
// the sale's (seat counts its caller reads elsewhere): sold out, closed while
// every seat left is held (her place kept; admissions go on), or closed once
// the event has started.
//
// # When Redis cannot answer
//
// The room fails closed: it protects capacity, so Join, Status, Poll (with a
// token too: its progress cannot be read) and CheckAdmitted return ErrUnavailable, which the API answers with 503 and
// Retry-After. Calls have a short deadline and a circuit breaker, so an outage
// costs microseconds a call. Events without a room never reach Redis here.
package waitroom
