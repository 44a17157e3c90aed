package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/seatstream"
)

// streamKeepAlive is how often an idle stream sends a comment line, so that
// proxies and the browser know it lives.
const streamKeepAlive = 15 * time.Second

// streamSeats serves GET /v1/events/{id}/seats/stream (public): the live seat
// map as server-sent events. First "snapshot", the whole map (the body of GET
// /v1/events/{id}/seats); then "changes", the seats whose status changed,
// about once a second while any do. A stream is not a request in flight (it
// lasts); STAGEDOOR_MAX_STREAMS bounds them instead, the next refused at once.
// A watcher too slow to read is dropped; its browser reconnects.
func (s *Server) streamSeats(c echo.Context) error {
	if _, err := s.events.Info(c.Request().Context(), c.Param("id")); err != nil {
		return err // no such event: 404, holding no slot
	}
	if !s.streamSlots.TryAcquire(1) {
		s.metrics.shed.WithLabelValues(string(limits.Streams)).Inc()
		return &Problem{Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
			Detail:     "this instance serves its maximum of live seat maps; poll GET /v1/events/{id}/seats meanwhile",
			RetryAfter: 5 * time.Second, Extensions: boundMember(string(limits.Streams))}
	}
	defer s.streamSlots.Release(1)
	ctx := c.Request().Context()
	sub, err := s.seats.Subscribe(ctx, c.Param("id"))
	if errors.Is(err, seatstream.ErrClosed) {
		return &Problem{Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
			Detail: "this instance is shutting down; reconnect", RetryAfter: time.Second}
	}
	if err != nil {
		return err
	}
	defer sub.Close()

	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // a proxy must not hold the events back
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w.Writer)
	send := func(format string, args ...any) error {
		// The server's write timeout counts from the request's start: each
		// write of a stream gets a deadline of its own instead.
		_ = rc.SetWriteDeadline(time.Now().Add(streamKeepAlive * 2))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return err
		}
		return rc.Flush()
	}
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-sub.C:
			if !ok {
				return nil // dropped (too slow) or shutting down: the browser reconnects
			}
			name, data, err := s.seatMapBodies.streamEvent(msg)
			if err != nil {
				return err
			}
			if err := send("event: %s\ndata: %s\n\n", name, data); err != nil {
				return nil
			}
		case <-keepAlive.C:
			if err := send(": keep-alive\n\n"); err != nil {
				return nil
			}
		}
	}
}
