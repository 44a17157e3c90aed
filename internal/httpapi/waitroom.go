package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/queuetoken"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// queueJSON is a buyer's place in a waiting room: waiting with a position and
// an estimated wait, admitted until a time, closed (for now, her place kept,
// or for good) or sold out; and the queue token to send back with the next
// poll.
type queueJSON struct {
	Status               waitroom.State `json:"status"`
	EventID              string         `json:"event_id"`
	Position             *int           `json:"position,omitempty"`
	EstimatedWaitSeconds *int64         `json:"estimated_wait_seconds,omitempty"`
	Paused               bool           `json:"paused,omitempty"`
	AdmittedUntil        *time.Time     `json:"admitted_until,omitempty"`
	ClosedReason         string         `json:"closed_reason,omitempty"`
	QueueToken           string         `json:"queue_token,omitempty"`
}

// queueTokenHeader carries a poll's queue token (the queue_token of the
// answer before).
const queueTokenHeader = "Queue-Token"

func queueJSONOf(eventID string, st waitroom.Status) queueJSON {
	out := queueJSON{Status: st.State, EventID: eventID, ClosedReason: st.ClosedReason}
	switch {
	case !st.AdmittedUntil.IsZero():
		out.AdmittedUntil = &st.AdmittedUntil
	case st.State == waitroom.Waiting && st.Paused: // her place kept, no estimate
		out.Position, out.Paused = &st.Position, true
	case st.State == waitroom.Waiting:
		wait := waitroom.WaitSeconds(st.EstimatedWait)
		out.Position, out.EstimatedWaitSeconds = &st.Position, &wait
	case st.Position > 0: // closed for now, her place kept
		out.Position = &st.Position
	}
	return out
}

// withSale tells the buyer's status with the sale's (waitroom.Status.Over):
// sold out, closed while every seat left is held, or closed once the event
// has started. The seat counts come from the event's snapshot, at most a
// second old (no query most of the time, none to Redis); when they cannot be
// read the status is told as the room gives it.
func (s *Server) withSale(c echo.Context, ev event.Info, st waitroom.Status) waitroom.Status {
	e, err := s.events.Get(c.Request().Context(), ev.ID)
	if err != nil {
		return st
	}
	return st.Over(waitroom.Sale{StartsAt: ev.StartsAt, Available: e.SeatsAvailable, Held: e.SeatsHeld})
}

const roomEventKey = "waitroom_event"

// roomEvent is the event of a queue route, read once per request (from the
// per-instance cache): event.ErrNotFound for an unknown event, an error
// wrapping waitroom.ErrNoRoom for one without a waiting room.
func (s *Server) roomEvent(c echo.Context) (event.Info, error) {
	if ev, ok := c.Get(roomEventKey).(event.Info); ok {
		return ev, nil
	}
	ev, err := s.events.Info(c.Request().Context(), c.Param("id"))
	if err != nil {
		return event.Info{}, err
	}
	if err := waitroom.CheckRoom(ev); err != nil {
		return event.Info{}, err
	}
	c.Set(roomEventKey, ev)
	return ev, nil
}

// joinQueue serves POST /v1/events/{id}/queue (buyer; queue-join already
// passed): she joins, or keeps her place if she is already in the queue.
func (s *Server) joinQueue(c echo.Context) error {
	ev, err := s.roomEvent(c)
	if err != nil {
		return err
	}
	st, err := s.waitRoom.Join(c.Request().Context(), ev, principalOf(c).AccountID)
	if err != nil {
		return err
	}
	st = s.withSale(c, ev, st)
	return c.JSON(http.StatusOK, s.withToken(c, queueJSONOf(ev.ID, st), st.Place, time.Time{}))
}

// withToken adds the queue token of the place to the answer. A token that
// cannot be signed (PostgreSQL has not answered for its key yet) is left
// out: the next poll then asks the room, as one without a token does.
func (s *Server) withToken(c echo.Context, out queueJSON, pl waitroom.Place, since time.Time) queueJSON {
	token, err := s.queueTokens.Sign(c.Request().Context(), pl, since)
	if err != nil {
		s.logger.WarnContext(c.Request().Context(), "queue token not signed", "event_id", pl.EventID, "err", err)
		return out
	}
	out.QueueToken = token
	return out
}

// queueStatus serves GET /v1/events/{id}/queue (buyer): her place, or 404
// when she is not in the queue (never joined, or her admission lapsed). With
// the Queue-Token of her last answer it costs the room no Redis call of its
// own (waitroom.Poll); a token that is not valid for her and this event is
// refused (400 invalid-queue-token).
func (s *Server) queueStatus(c echo.Context) error {
	ev, err := s.roomEvent(c)
	if err != nil {
		return err
	}
	ctx, buyer := c.Request().Context(), principalOf(c).AccountID
	var place *waitroom.Place
	var since time.Time
	if token := c.Request().Header.Get(queueTokenHeader); token != "" {
		t, err := s.queueTokens.Verify(ctx, token, ev.ID, buyer)
		switch {
		case errors.Is(err, queuetoken.ErrInvalid):
			return errkind.Invalidf("the %s header: %w", queueTokenHeader, err)
		case err == nil:
			place, since = &t.Place, t.Since
		} // else its key could not be read: poll as without a token
	}
	st, err := s.waitRoom.Poll(ctx, ev, buyer, place)
	if err != nil {
		return err
	}
	st = s.withSale(c, ev, st)
	return c.JSON(http.StatusOK, s.withToken(c, queueJSONOf(ev.ID, st), st.Place, since))
}
