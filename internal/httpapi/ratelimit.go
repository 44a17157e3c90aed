package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// checksFunc names the buckets one request must pass, such as the buyer's and
// the organizer's; it may return none when the request is not limited.
type checksFunc func(c echo.Context) ([]ratelimit.Check, error)

// limitBy is the ring of a limited route: it decides the request against the
// buckets checks names, all at once, and refuses with 429 before the handler
// runs. An allowed request carries the headers of the tightest limit.
func (s *Server) limitBy(checks checksFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			cs, err := checks(c)
			if err != nil {
				return err
			}
			if err := s.enforce(c, cs...); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// enforce decides the request against checks, writes the rate-limit headers of
// the tightest limit seen so far in this request, and returns the 429 problem
// when a limit refused. Handlers call it for limits keyed on the body.
func (s *Server) enforce(c echo.Context, checks ...ratelimit.Check) error {
	if len(checks) == 0 {
		return nil
	}
	return s.decided(c, s.limiter.Allow(c.Request().Context(), checks...))
}

// decided records the decision d of the request's limits: it writes the
// rate-limit headers of the tightest limit seen so far in this request, and
// returns the 429 problem when a limit refused.
func (s *Server) decided(c echo.Context, d ratelimit.Decision) error {
	if earlier, ok := c.Get(decisionKey).(ratelimit.Decision); ok {
		// The tightest of all the limits this request passed so far.
		d.Results = append(earlier.Results, d.Results...)
	}
	c.Set(decisionKey, d)
	if tightest, ok := d.Tightest(); ok {
		writeRateLimitHeaders(c.Response().Header(), tightest)
	}
	if d.Allowed {
		return nil
	}
	return refusal(d)
}

const decisionKey = "ratelimit_decision"

// writeRateLimitHeaders writes draft-ietf-httpapi-ratelimit-headers-10 and the
// X-RateLimit names for one limit:
//
//	RateLimit-Policy: "hold-buyer";q=10;w=60
//	RateLimit: "hold-buyer";r=7;t=18
func writeRateLimitHeaders(h http.Header, r ratelimit.Result) {
	l := r.Setting.Limit
	window := ceilSeconds(l.TimeToFull())
	reset := ceilSeconds(r.ResetAfter)
	// No fmt here: every refusal passes this way, and must cost next to nothing.
	name := `"` + string(r.Limit) + `"` // limit names are plain: no quoting needed
	h.Set("RateLimit-Policy", name+";q="+strconv.Itoa(l.Burst)+";w="+strconv.FormatInt(window, 10))
	h.Set("RateLimit", name+";r="+strconv.Itoa(r.Remaining)+";t="+strconv.FormatInt(reset, 10))
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.Burst))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
}

// refusal is the 429 problem of a refused decision.
func refusal(d ratelimit.Decision) *Problem {
	violated := d.Violated()
	first := violated[0]
	var setting ratelimit.Setting
	for _, r := range d.Results {
		if r.Limit == first {
			setting = r.Setting
			break
		}
	}
	retryMS := retryAfterMillis(d.RetryAfter)
	return &Problem{
		Slug:   "rate-limited",
		Status: http.StatusTooManyRequests,
		Detail: "limit " + string(first) + " (" + setting.Limit.String() + ") refused this request; retry in " +
			strconv.FormatInt(retryMS, 10) + " ms",
		Extensions: map[string]any{
			"limit":             first,
			"violated-policies": violated,
			"retry_after_ms":    retryMS,
		},
		RetryAfter: d.RetryAfter,
	}
}

// retryAfterMillis rounds up, so that a client waiting exactly that long is allowed.
func retryAfterMillis(d time.Duration) int64 {
	return int64(math.Ceil(float64(d) / float64(time.Millisecond)))
}

func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}
