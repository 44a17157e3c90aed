package checkout

import (
	"sync"
	"time"
)

// breaker is the payment circuit breaker: shared by every buyer of an
// instance, so that an outage of Payrail costs each checkout nothing once it
// is known, yet no one buyer can open it. A buyer's own failures (tok_error,
// a card Payrail chokes on) say nothing about Payrail; failures of many
// buyers at once do.
//
// Closed, it keeps each buyer's latest charge outcome of the last window (a
// decline is an answer, so a success). It opens on a failure ratio over a
// volume of buyers: when at least volume buyers were seen in the window, at
// least half of them failed last, and at least breakerFailing (3) did. One
// buyer counts once however often it fails; a busy instance at a 10 % failure
// rate never opens; and while fewer buyers than the volume pay, it stays
// closed (each checkout then finds out for itself: a refused connection at
// once, a timeout in STAGEDOOR_PAYMENT_TIMEOUT). Open, it refuses every charge
// for the cooldown. Then it is half-open: it lets one probe through per buyer,
// up to breakerProbes at once; the first that Payrail answers closes it, and
// only breakerProbes failed probes of as many buyers open it again, so one
// buyer whose probe fails cannot keep it open. A success seen while open
// closes it as well: Payrail answered.
type breaker struct {
	window   time.Duration
	volume   int
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	state     breakerState
	openUntil time.Time // open: refuses until then, then half-open
	latest    map[string]outcomeAt
	seen      []seenAt // latest's entries in the order they were written, for expiry
	failing   int      // the failed entries of latest
	probes    map[string]bool
	failed    int // half-open: probes that failed
}

// The breaker's fixed numbers: how many buyers' failures are "several", and
// how many probes it lets through at once when half-open.
const (
	breakerFailing = 3
	breakerProbes  = 3
)

type breakerState int

const (
	breakerClosed breakerState = iota
	breakerOpen
	breakerHalfOpen
)

type outcomeAt struct {
	failed bool
	at     time.Time
}

type seenAt struct {
	buyer string
	at    time.Time
}

// The breaker's defaults.
const (
	DefaultBreakerWindow = 10 * time.Second
	DefaultBreakerBuyers = 20 // STAGEDOOR_PAYMENT_BREAKER_BUYERS
)

func newBreaker(window time.Duration, volume int, cooldown time.Duration) *breaker {
	return &breaker{window: window, volume: max(volume, breakerFailing), cooldown: cooldown, now: time.Now,
		latest: map[string]outcomeAt{}, probes: map[string]bool{}}
}

// refusing reports whether admit would refuse the buyer now, without taking a
// probe's place: a checkout asks before it writes anything.
func (b *breaker) refusing(buyer string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.admits(buyer)
}

// admit reports whether the buyer's charge may go to Payrail; half-open, an
// admitted charge is the buyer's probe, and its outcome must be recorded.
func (b *breaker) admit(buyer string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.admits(buyer) {
		return false
	}
	if b.state == breakerHalfOpen {
		b.probes[buyer] = true
	}
	return true
}

// admits is admit without taking a probe's place; b.mu is held.
func (b *breaker) admits(buyer string) bool {
	if b.state == breakerOpen && !b.now().Before(b.openUntil) {
		b.state, b.probes, b.failed = breakerHalfOpen, map[string]bool{}, 0
	}
	switch b.state {
	case breakerOpen:
		return false
	case breakerHalfOpen:
		_, probing := b.probes[buyer]
		return !probing && len(b.probes) < breakerProbes
	}
	return true
}

// unavailable reports whether the breaker holds Payrail to be down: open or
// half-open.
func (b *breaker) unavailable() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state != breakerClosed
}

// record counts the outcome of a charge of buyer: failed when Payrail failed
// or did not answer in time (a decline is an answer).
func (b *breaker) record(buyer string, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	switch {
	case !failed && b.state != breakerClosed:
		b.close()
	case b.state == breakerHalfOpen:
		if _, probe := b.probes[buyer]; probe {
			b.failed++
		}
		if b.failed >= breakerProbes {
			b.open(now)
		}
	case b.state == breakerClosed:
		b.expire(now)
		if old, ok := b.latest[buyer]; ok && old.failed {
			b.failing--
		}
		if failed {
			b.failing++
		}
		b.latest[buyer] = outcomeAt{failed: failed, at: now}
		b.seen = append(b.seen, seenAt{buyer: buyer, at: now})
		seen := len(b.latest)
		if failed && seen >= b.volume && b.failing >= breakerFailing && 2*b.failing >= seen {
			b.open(now)
		}
	}
}

// expire forgets the outcomes older than the window; b.mu is held.
func (b *breaker) expire(now time.Time) {
	cut := now.Add(-b.window)
	n := 0
	for ; n < len(b.seen) && b.seen[n].at.Before(cut); n++ {
		s := b.seen[n]
		if l, ok := b.latest[s.buyer]; ok && l.at.Equal(s.at) {
			delete(b.latest, s.buyer)
			if l.failed {
				b.failing--
			}
		}
	}
	b.seen = b.seen[n:]
}

// open opens the breaker for the cooldown; b.mu is held.
func (b *breaker) open(now time.Time) {
	b.state, b.openUntil = breakerOpen, now.Add(b.cooldown)
	b.forget()
}

// close closes it with a fresh window; b.mu is held.
func (b *breaker) close() {
	b.state = breakerClosed
	b.forget()
}

func (b *breaker) forget() {
	b.latest, b.seen, b.failing = map[string]outcomeAt{}, nil, 0
	b.probes, b.failed = map[string]bool{}, 0
}
