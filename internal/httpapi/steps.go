package httpapi

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/shed"
)

// step is one thing a route's request passes after the outer rings, in the
// order of its row in routes.go: a ring before the handler (authentication, a
// limit keyed on what the request names before its body, its lease in
// flight), or protections its handler decides once the body names their key.
type step struct {
	ring        echo.MiddlewareFunc // nil: the handler decides protections
	protections []ratelimit.Name    // what it decides, of internal/limits
	// apart: the route is not counted in the in-flight bound
	// (limits.InFlight); its protections bound it instead.
	apart bool
	// quiet: the route's answers are logged at debug level (see quiet).
	quiet bool
	// ownEncoding: the handler chooses its answer's encoding; no
	// compression ring (compress.go).
	ownEncoding bool
}

// quiet is the step of a route whose answers are not logged one line each
// (at info level) but at debug level, unless they are 5xx: the files and
// images a page loads by the dozen, and the probes a balancer sends each
// second. A page view is its page's line; the metrics count them all.
var quiet = step{quiet: true}

// inHandler names the protections the handler decides, in its order, once the
// body names their keys: a bucket whose Ring is limits.Handler, a bound or
// admission, or a lease taken with them (a hold's).
func inHandler(names ...ratelimit.Name) step {
	for _, name := range names {
		if p := limits.Of(name); p.Ring != limits.Handler && p.Kind != limits.Lease {
			panic(fmt.Sprintf("httpapi: %s is decided by a ring (%d), not by a handler", name, p.Ring))
		}
	}
	return step{protections: names}
}

// boundedApart is the step of a route that is not counted in the in-flight
// bound: the bounds named (decided by its handler) bound it instead.
func boundedApart(bounds ...ratelimit.Name) step {
	st := inHandler(bounds...)
	st.apart = true
	return st
}

// as is the authentication ring, letting through only the kinds given (any
// kind when none is).
func (s *Server) as(kinds ...auth.Kind) step { return step{ring: s.authenticate(kinds...)} }

// limited is the ring of a token bucket keyed on what the request names
// before its body (its Ring is limits.Route): it refuses with 429 before the
// handler runs.
func (s *Server) limited(name ratelimit.Name) step {
	p := limits.Of(name)
	if p.Kind != limits.Bucket || p.Ring != limits.Route {
		panic(fmt.Sprintf("httpapi: %s is not a bucket a ring decides", name))
	}
	key := s.ringKey(p.Key)
	return step{protections: []ratelimit.Name{name}, ring: s.limitBy(func(c echo.Context) ([]ratelimit.Check, error) {
		k, err := key(c)
		if err != nil {
			return nil, err
		}
		return []ratelimit.Check{{Limit: name, Key: k}}, nil
	})}
}

// lease is the ring that counts the request in flight for its principal, on
// the one of the leases named that is keyed on the principal's kind
// (countInFlight).
func (s *Server) lease(names ...ratelimit.Name) step {
	byKind := map[auth.Kind]*concurrency.Limiter{}
	for _, name := range names {
		switch limits.Of(name).Key {
		case limits.ByBuyer:
			byKind[auth.Buyer] = s.leaseOf(name)
		case limits.ByOrganizer:
			byKind[auth.Organizer] = s.leaseOf(name)
		default:
			panic("httpapi: no principal's kind keys " + string(name))
		}
	}
	return step{protections: names, ring: s.countInFlight(byKind)}
}

// leaseOf is the limiter of the lease named.
func (s *Server) leaseOf(name ratelimit.Name) *concurrency.Limiter {
	switch name {
	case limits.BuyerConcurrency:
		return s.buyerConcurrency
	case limits.OrganizerConcurrency:
		return s.organizerConcurrency
	}
	panic("httpapi: no lease " + string(name))
}

// routeKey names a route: its method and echo's path template.
type routeKey struct{ method, path string }

// route adds the route of one row: its class, which the shedding ring reads
// back (classOf), and its steps' rings, in order. An exempt route, or one
// bounded apart, is left out of the in-flight bound.
func (s *Server) route(class shed.Class, method, path string, h echo.HandlerFunc, steps ...step) {
	key := routeKey{method, path}
	var rings []echo.MiddlewareFunc
	compress := true
	for _, st := range steps {
		compress = compress && !st.ownEncoding
		if st.ring != nil {
			rings = append(rings, st.ring)
		}
		s.rows[key] = append(s.rows[key], st.protections...)
		if st.apart {
			s.unbounded[path] = true
		}
		if st.quiet {
			s.quiet[path] = true
		}
	}
	if class == shed.Exempt {
		s.unbounded[path] = true
	}
	if compress && method == "GET" {
		rings = append(rings, compressAnswers) // last: what the rings refuse is never wrapped
	}
	s.classes[key] = class
	s.echo.Add(method, path, h, rings...)
}

// classOf is the class of the request's route; a route routes.go did not
// classify (a test's own) is normal.
func (s *Server) classOf(c echo.Context) shed.Class {
	if class, ok := s.classes[routeKey{c.Request().Method, c.Path()}]; ok {
		return class
	}
	return shed.Normal
}
