// Package guard runs calls to a dependency (Redis, for the limiter and the
// waiting room) under a deadline and a circuit breaker, so that an outage costs
// each caller microseconds instead of a timeout: after Failures failed calls in
// a row the breaker refuses at once for Cooldown, then lets one probe through.
// A call whose caller went away first is no failure of the dependency: it is
// not counted, and the caller's own error is returned.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
}

// Guard is safe for concurrent use.
type Guard struct {
	timeout time.Duration
	breaker *gobreaker.CircuitBreaker[struct{}]
}

// errCallerGone marks a call that failed because its caller's context ended.
var errCallerGone = errors.New("the caller's context ended")

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
			IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) },
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
	_, err := g.breaker.Execute(func() (struct{}, error) {
		cctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if err := call(cctx); err != nil {
			if ctx.Err() != nil {
				return struct{}{}, errCallerGone
			}
			return struct{}{}, err
		}
		return struct{}{}, nil
	})
	switch {
	case errors.Is(err, errCallerGone):
		return ctx.Err()
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return fmt.Errorf("%s: %w", g.breaker.Name(), ErrOpen)
	}
	return err
}

// State is the breaker's state now: closed (calling), open (refusing) or
// half-open (letting one probe through).
func (g *Guard) State() gobreaker.State { return g.breaker.State() }

func isOpen(err error) bool { return errors.Is(err, ErrOpen) }
