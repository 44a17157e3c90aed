package concurrency

import (
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// acquireRider is acquireScript as a rider of the rate limiter's script
// (ratelimit.NewRiderScript): the same lease (acquireLease), taken in the
// script that decides the request's buckets, so that the request pays one
// round trip for both. argv is acquireScript's ARGV; now is Redis's clock in
// µs.
var acquireRider = ratelimit.NewRiderScript(`
local nowms = math.floor(now / 1000)
` + acquireLease)

// Rider returns one request of identity's lease as a rider of the rate
// limiter's script (ratelimit.Limiter.AllowWith), and entered, which reads
// what it decided once that has run: the same Decision and release func as
// Enter's. Give the rider to AllowWith, then call entered once.
//
// The rider is nil when the limit is off (entered then counts off, as Enter
// does). When the rate limits refused the request before the rider ran,
// entered says allowed with no lease and counts nothing: the request is
// refused by them, not by this limit. When Redis could not answer, it fails
// open, as Enter does. When the rider took a lease, release gives it back
// with one call (ZREM), as Enter's does; call it also when the rate limits
// refused the request after the lease was taken (a fallback bucket of
// another slot).
//
// The rider's key is the identity's (Key): it rides in one script with the
// buckets in its slot, those of limits of the same Tag.
func (l *Limiter) Rider(identity string) (rider *ratelimit.Rider, entered func() (Decision, func())) {
	d := Decision{Limit: l.name, Allowed: true, Max: l.max}
	mode := l.Mode()
	if mode == ratelimit.Off {
		return nil, func() (Decision, func()) {
			d.Outcome = OutcomeOff
			l.count(d.Outcome)
			return d, noRelease
		}
	}
	always := "0"
	if mode == ratelimit.Shadow {
		always = "1"
	}
	key, id := l.key(identity), l.newID()
	r := &ratelimit.Rider{Script: acquireRider, Key: key, Args: []any{l.max, l.leaseMS, id, always}}
	return r, func() (Decision, func()) {
		switch {
		case r.Err != nil:
			d.Outcome = OutcomeFailOpen
			l.count(d.Outcome)
			return d, noRelease
		case !r.Ran:
			return d, noRelease // refused by a rate limit first
		case len(r.Reply) != 2:
			d.Outcome = OutcomeFailOpen // cannot happen: the script's reply is two numbers
			l.count(d.Outcome)
			return d, noRelease
		}
		took, before := r.Reply[0] == 1, r.Reply[1]
		return l.decided(&d, key, id, took, before)
	}
}
