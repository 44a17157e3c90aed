package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/limits"
)

// The outer rings (docs/design.md), outside in: request id, observe (access log and
// metrics, refusals included), recover, the body read under its own deadline,
// the in-flight bound.

const requestIDKey = "request_id"

// withRequestID echoes a sane client X-Request-Id or makes one, on every response.
func withRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		c.Set(requestIDKey, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func saneRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if r < '!' || r > '~' {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func requestID(c echo.Context) string {
	id, _ := c.Get(requestIDKey).(string)
	return id
}

// routeOf is the route template that matched ("/v1/holds/:id"), so metric labels
// stay few; requests that matched no route share one label.
func routeOf(c echo.Context) string {
	if p := c.Path(); p != "" && p != "/*" {
		return p
	}
	return "unmatched"
}

// observe writes the response of any error at once, so that the access log and
// the metrics see the final status of every request, refusals included.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		elapsed := time.Since(start)
		route := routeOf(c)
		status := c.Response().Status
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		s.metrics.duration.WithLabelValues(route).Observe(elapsed.Seconds())
		// A refusal (429, or a 503 at a bound) is counted, and logged here
		// only at debug level: a flood of them must cost next to nothing, log
		// included (handleError tallies them: s.refusals). A quiet route's
		// answer (a page's file, a probe) is logged at debug level too,
		// unless it failed.
		level := slog.LevelInfo
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
			status < 500 && s.quiet[route] {
			level = slog.LevelDebug
		}
		if !s.logger.Enabled(c.Request().Context(), level) {
			return nil
		}
		// The path, never the query string: it may carry something private.
		s.logger.LogAttrs(c.Request().Context(), level, "request",
			slog.String("request_id", requestID(c)),
			slog.String("method", c.Request().Method),
			slog.String("path", c.Request().URL.Path),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Int64("bytes", c.Response().Size),
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			slog.String("remote", c.Request().RemoteAddr),
		)
		return nil
	}
}

// recoverPanics turns a panic into a 500 problem and logs its stack.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			stack := make([]byte, 8<<10)
			stack = stack[:runtime.Stack(stack, false)]
			s.logger.Error("panic", "request_id", requestID(c), "panic", fmt.Sprint(r), "stack", string(stack))
			err = fmt.Errorf("panic: %v", r)
		}()
		return next(c)
	}
}

// boundInFlight refuses a request at once with 503 when max are already in
// flight on this instance (limits.InFlight), instead of letting it queue
// behind them. The routes whose rows in routes.go are exempt or bounded apart
// are not counted (Server.unbounded): a load balancer that cannot reach the
// probes would take a busy instance out of rotation, and a stream lasts
// (STAGEDOOR_MAX_STREAMS bounds them).
func (s *Server) boundInFlight(max int) echo.MiddlewareFunc {
	inFlight := &s.inFlight.n
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if s.unbounded[c.Path()] { // the route's template
				return next(c)
			}
			if inFlight.Add(1) > int64(max) {
				inFlight.Add(-1)
				s.metrics.shed.WithLabelValues(string(limits.InFlight)).Inc()
				return &Problem{
					Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
					Detail:     fmt.Sprintf("this instance is serving its maximum of %d requests; retry shortly", max),
					RetryAfter: time.Second, Extensions: boundMember(string(limits.InFlight)),
				}
			}
			defer inFlight.Add(-1)
			return next(c)
		}
	}
}

// maxBodyBytes is the largest request body Stagedoor reads, but for the
// routes of bodyLimits.
const maxBodyBytes = 64 << 10

// bodyLimits are the routes (templates) whose bodies may be larger than
// maxBodyBytes: over theirs, 413 payload-too-large.
var bodyLimits = map[string]int64{"/v1/organizer/events/:id/image": event.MaxImageBytes}

// readBody reads the whole request body before any scarce resource is taken
// (an in-flight place, a checkout slot, a database connection), under a
// deadline of its own (STAGEDOOR_BODY_TIMEOUT): a client that dribbles its body
// is cut with 408 and held nothing meanwhile. A declared body over 64 KiB is
// refused before it is read, an undeclared one cut at 64 KiB. Handlers then read
// the body from memory.
func (s *Server) readBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		limit, larger := bodyLimits[c.Path()]
		if !larger {
			limit = maxBodyBytes
		}
		if req.ContentLength > limit {
			return bodyTooLarge(larger)
		}
		rc := http.NewResponseController(c.Response().Writer)
		_ = rc.SetReadDeadline(time.Now().Add(s.config.BodyTimeout)) // unsupported in-process: no deadline needed there
		body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, limit))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return bodyTooLarge(larger)
		case err != nil: // the deadline passed, or the client went away
			// The deadline stays passed: net/http then gives up on the rest of
			// the body at once and closes the connection after the answer,
			// instead of waiting for it.
			c.Response().Header().Set(echo.HeaderConnection, "close")
			return &Problem{Slug: "request-timeout", Status: http.StatusRequestTimeout,
				Detail: fmt.Sprintf("the request body did not arrive within %s; nothing was done", s.config.BodyTimeout)}
		}
		_ = rc.SetReadDeadline(time.Time{})
		req.Body = io.NopCloser(bytes.NewReader(body))
		return next(c)
	}
}

// bodyTooLarge is the answer to a body over its route's limit: 400 over the
// usual 64 KiB (as ever), 413 over a larger route's own (an image's 2 MB).
func bodyTooLarge(larger bool) error {
	if larger {
		return event.ErrImageTooLarge
	}
	return errkind.Invalidf("the request body is larger than 64 KiB")
}
