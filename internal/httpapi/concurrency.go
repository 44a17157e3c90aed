package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// countInFlight is the ring that counts a buyer's or an organizer's request
// in flight from here to its answer, across instances, on the lease of its
// principal's kind in byKind (none: not counted); past the maximum it answers
// 429 too-many-concurrent-requests. It stands after the route's rate limits,
// so that a request they refuse never reaches Redis for it; createHold, whose
// limits are decided in the handler, takes its lease with them
// (enforceAndEnter).
func (s *Server) countInFlight(byKind map[auth.Kind]*concurrency.Limiter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			lim, ok := byKind[principalOf(c).Kind]
			if !ok {
				return next(c)
			}
			d, release := lim.Enter(c.Request().Context(), principalOf(c).AccountID)
			if !d.Allowed {
				release()
				return tooManyAtOnce(d)
			}
			// The lease is given back before the answer leaves this
			// instance (net/http sends the end of a body once the handler
			// has returned), so that a client that waits for its answer and
			// asks again is never refused for the request it saw finish.
			// Giving it back in the background saved the client one round
			// trip and refused a buyer's retry of five checkouts under load.
			defer release()
			return next(c)
		}
	}
}

// enforceAndEnter decides the buyer's request's rate limits (as enforce does)
// and takes its lease on her requests in flight (buyer-concurrency) in the
// same Redis script as the buckets in its slot (hold-buyer's: both are tagged
// with the buyer), so that the two cost one round trip; leave ends the count
// (before the answer leaves, as countInFlight's).
// The lease is taken only when no rate limit refused, and a request it refuses
// spends no token. Its route authenticates buyers only.
func (s *Server) enforceAndEnter(c echo.Context, checks ...ratelimit.Check) (leave func(), err error) {
	rider, entered := s.buyerConcurrency.Rider(principalOf(c).AccountID)
	refused := s.decided(c, s.limiter.AllowWith(c.Request().Context(), rider, checks...))
	d, release := entered()
	switch {
	case refused != nil:
		release()
		return nil, refused
	case !d.Allowed:
		release()
		return nil, tooManyAtOnce(d)
	}
	return release, nil
}

// tooManyAtOnce is the 429 problem of a refused concurrency decision, built
// without fmt: refusals must cost next to nothing.
func tooManyAtOnce(d concurrency.Decision) *Problem {
	retryMS := retryAfterMillis(d.RetryAfter)
	return &Problem{
		Slug:   "too-many-concurrent-requests",
		Status: http.StatusTooManyRequests,
		Detail: "you have " + strconv.Itoa(d.InFlight) + " requests in flight, the most " + string(d.Limit) +
			" allows; retry once one has finished",
		Extensions: map[string]any{
			"limit":          d.Limit,
			"max_in_flight":  d.Max,
			"retry_after_ms": retryMS,
		},
		RetryAfter: d.RetryAfter,
	}
}
