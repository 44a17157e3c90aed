// Package guard runs calls to a dependency (Redis, for the limiter and the
// waiting room) under a deadline and a circuit breaker, so that an outage costs
// each caller microseconds instead of a timeout: after Failures failed calls in
// a row the breaker refuses at once for Cooldown, then lets one probe through.
// A call whose caller went away first is no failure of the dependency: it is
// not counted, and the caller's own error is returned.
//
// "In a row" means one after the other: a failure counts towards opening the
// breaker only if its call started after the first failure of the streak was
// seen. The calls in flight together when a dependency (or this process)
// stalls past their deadline all fail at once; counted each, one stall of a
// healthy Redis node would open its breaker and fail every key it serves for
// Cooldown. Counted once, it costs only the calls it caught; a dead node's
// failures go on, each call started after the last failed, and open it.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
)

// ErrOpen is returned, without calling, while the breaker refuses.
var ErrOpen = errors.New("circuit breaker open")

// Options configure a Guard; all are optional.
type Options struct {
	Name     string        // the breaker's name in log lines
	Timeout  time.Duration // deadline of one call; default 50 ms
	Failures int           // failed calls in a row that open the breaker; default 5
	Cooldown time.Duration // how long it stays open; default 1 s
	Logger   *slog.Logger  // told of the breaker's changes of state; nil: nobody
	// Now is the clock of Nodes' sweeps for nodes whose keys another serves
	// (tests move it by hand); nil: time.Now.
	Now func() time.Time
}

// Guard is safe for concurrent use.
type Guard struct {
	timeout time.Duration
	breaker *gobreaker.CircuitBreaker[struct{}]
	streak  atomic.Int64 // when the first failure of the streak under way was seen (monoNow); 0: none
}

// epoch is the origin of monoNow.
var epoch = time.Now()

// monoNow is the monotonic clock in ns since epoch, never 0.
func monoNow() int64 { return int64(time.Since(epoch)) + 1 }

// errCallerGone marks a call that failed because its caller's context ended.
var errCallerGone = errors.New("the caller's context ended")

// inFlight wraps the failure of a call that was under way when the streak of
// failures began: the breaker does not count it (see the package's doc).
type inFlight struct{ err error }

func (e inFlight) Error() string { return e.err.Error() }
func (e inFlight) Unwrap() error { return e.err }

// New returns a Guard.
func New(o Options) *Guard {
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	if o.Failures <= 0 {
		o.Failures = 5
	}
	if o.Cooldown <= 0 {
		o.Cooldown = time.Second
	}
	return &Guard{
		timeout: o.Timeout,
		breaker: gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        o.Name,
			MaxRequests: 1,
			Timeout:     o.Cooldown,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(o.Failures) },
			IsExcluded: func(err error) bool {
				var in inFlight
				return errors.Is(err, errCallerGone) || errors.As(err, &in)
			},
			OnStateChange: func(name string, from, to gobreaker.State) {
				if o.Logger != nil {
					o.Logger.Warn("circuit breaker", "name", name, "from", from.String(), "to", to.String())
				}
			},
		}),
	}
}

// Timeout is the deadline of one call.
func (g *Guard) Timeout() time.Duration { return g.timeout }

// Do runs call with a context that ends after the guard's timeout (or with
// ctx), under the breaker. It returns call's error; ErrOpen when the breaker
// refused without calling; or ctx's error when ctx ended first.
func (g *Guard) Do(ctx context.Context, call func(context.Context) error) error {
	return g.DoUntil(ctx, time.Now().Add(g.timeout), call)
}

// DoUntil is Do with a deadline of the caller's: several calls of one decision
// share one deadline.
func (g *Guard) DoUntil(ctx context.Context, deadline time.Time, call func(context.Context) error) error {
	started := monoNow()
	_, err := g.breaker.Execute(func() (struct{}, error) {
		cctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if err := call(cctx); err != nil {
			if ctx.Err() != nil {
				return struct{}{}, errCallerGone
			}
			if first := g.streak.Load(); first != 0 && started < first {
				return struct{}{}, inFlight{err} // under way when the streak began
			}
			g.streak.CompareAndSwap(0, monoNow())
			return struct{}{}, err
		}
		if g.streak.Load() != 0 {
			g.streak.Store(0)
		}
		return struct{}{}, nil
	})
	var in inFlight
	switch {
	case errors.Is(err, errCallerGone):
		return ctx.Err()
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return fmt.Errorf("%s: %w", g.breaker.Name(), ErrOpen)
	case errors.As(err, &in):
		return in.err
	}
	return err
}

// State is the breaker's state now: closed (calling), open (refusing) or
// half-open (letting one probe through).
func (g *Guard) State() gobreaker.State { return g.breaker.State() }

func isOpen(err error) bool { return errors.Is(err, ErrOpen) }
