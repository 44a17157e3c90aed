package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// queueJSON is a buyer's place in a waiting room: waiting with a position and
// an estimated wait, or admitted until a time.
type queueJSON struct {
	Status               waitroom.State `json:"status"`
	EventID              string         `json:"event_id"`
	Position             *int           `json:"position,omitempty"`
	EstimatedWaitSeconds *int64         `json:"estimated_wait_seconds,omitempty"`
	AdmittedUntil        *time.Time     `json:"admitted_until,omitempty"`
}

func queueJSONOf(eventID string, st waitroom.Status) queueJSON {
	out := queueJSON{Status: st.State, EventID: eventID}
	if st.State == waitroom.Admitted {
		out.AdmittedUntil = &st.AdmittedUntil
		return out
	}
	wait := waitroom.WaitSeconds(st.EstimatedWait)
	out.Position, out.EstimatedWaitSeconds = &st.Position, &wait
	return out
}

const roomEventKey = "waitroom_event"

// roomEvent is the event of a queue route, read once per request (from the
// per-instance cache): event.ErrNotFound for an unknown event, an error
// wrapping waitroom.ErrNoRoom for one without a waiting room.
func (s *Server) roomEvent(c echo.Context) (event.Info, error) {
	if ev, ok := c.Get(roomEventKey).(event.Info); ok {
		return ev, nil
	}
	ev, err := s.Events.Info(c.Request().Context(), c.Param("id"))
	if err != nil {
		return event.Info{}, err
	}
	if err := waitroom.CheckRoom(ev); err != nil {
		return event.Info{}, err
	}
	c.Set(roomEventKey, ev)
	return ev, nil
}

// byBuyerAndRoom keys queue-join on the buyer and the event. An unknown event
// or one without a waiting room is refused first and spends no token.
func (s *Server) byBuyerAndRoom(limit ratelimit.Name) checksFunc {
	return func(c echo.Context) ([]ratelimit.Check, error) {
		ev, err := s.roomEvent(c)
		if err != nil {
			return nil, err
		}
		return []ratelimit.Check{{Limit: limit, Key: principalOf(c).AccountID + ":" + ev.ID}}, nil
	}
}

// joinQueue serves POST /v1/events/{id}/queue (buyer; queue-join already
// passed): she joins, or keeps her place if she is already in the queue.
func (s *Server) joinQueue(c echo.Context) error {
	ev, err := s.roomEvent(c)
	if err != nil {
		return err
	}
	st, err := s.WaitRoom.Join(c.Request().Context(), ev, principalOf(c).AccountID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, queueJSONOf(ev.ID, st))
}

// queueStatus serves GET /v1/events/{id}/queue (buyer): her place, or 404
// when she is not in the queue (never joined, or her admission lapsed).
func (s *Server) queueStatus(c echo.Context) error {
	ev, err := s.roomEvent(c)
	if err != nil {
		return err
	}
	st, err := s.WaitRoom.Status(c.Request().Context(), ev, principalOf(c).AccountID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, queueJSONOf(ev.ID, st))
}
