package httpapi

import (
	"net/http"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/shed"
)

// inFlight counts this instance's requests in flight, for boundInFlight and
// for the worker utilization shedder's signal (InFlight).
type inFlight struct{ n atomic.Int64 }

// InFlight returns the requests in flight on this instance, and the bound of
// STAGEDOOR_MAX_IN_FLIGHT: the worker utilization shedder's in-flight signal.
func (s *Server) InFlight() (n, max int) {
	return int(s.inFlight.n.Load()), s.config.MaxInFlight
}

// shedLoad is the ring of the shedders (Deps.Shedders, in order): each is asked
// about the request's class, without I/O, and the first that refuses answers
// 503 service-overloaded with Retry-After. Exempt routes are not asked.
func (s *Server) shedLoad(next echo.HandlerFunc) echo.HandlerFunc {
	if len(s.shedders) == 0 {
		return next
	}
	return func(c echo.Context) error {
		class := s.classOf(c)
		if class == shed.Exempt {
			return next(c)
		}
		for _, sh := range s.shedders {
			if d := sh.Admit(class); !d.Allowed {
				return overloaded(d)
			}
		}
		return next(c)
	}
}

// overloaded is the 503 problem of a request a shedder refused, built without
// fmt: shedding must cost next to nothing.
func overloaded(d shed.Decision) *Problem {
	return &Problem{
		Slug:   "service-overloaded",
		Status: http.StatusServiceUnavailable,
		Detail: d.Reason + "; retry later",
		Extensions: map[string]any{
			"shedder":        d.Shedder,
			"bound":          d.Shedder,
			"retry_after_ms": retryAfterMillis(d.RetryAfter),
		},
		RetryAfter: d.RetryAfter,
	}
}
