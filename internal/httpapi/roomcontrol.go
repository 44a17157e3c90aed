package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// waitingRoomStateJSON is a live room as its operators see it: its rate, whether
// it is paused, and how far its queue has come.
type waitingRoomStateJSON struct {
	EventID         string     `json:"event_id"`
	AdmitPerSecond  int        `json:"admit_per_second"`
	Paused          bool       `json:"paused"`
	ChangedAt       *time.Time `json:"changed_at,omitempty"`
	Queued          int        `json:"queued"`
	Waiting         int        `json:"waiting"`
	AdmittedThrough int        `json:"admitted_through"`
	Now             time.Time  `json:"now"`
}

func waitingRoomStateOf(eventID string, p waitroom.Progress) waitingRoomStateJSON {
	out := waitingRoomStateJSON{EventID: eventID, AdmitPerSecond: p.Rate, Paused: p.Paused,
		Queued: p.Queued, Waiting: p.Waiting(), AdmittedThrough: p.AdmittedThrough, Now: p.Now.UTC()}
	if !p.ChangedAt.IsZero() {
		at := p.ChangedAt.UTC()
		out.ChangedAt = &at
	}
	return out
}

// waitingRoomChangeJSON is a change to a live room; a field left out is kept.
type waitingRoomChangeJSON struct {
	AdmitPerSecond *int  `json:"admit_per_second"`
	Paused         *bool `json:"paused"`
}

// controlledRoom is the event of a room-control route: the organizer's own
// (anyone else's is 404, as if it did not exist) or, for the admin, any.
func (s *Server) controlledRoom(c echo.Context) (event.Info, error) {
	ev, err := s.roomEvent(c)
	if err != nil {
		return event.Info{}, err
	}
	if p := principalOf(c); p.Kind == auth.Organizer && p.AccountID != ev.OrganizerID {
		return event.Info{}, errkind.NotFoundf("event %s not found", c.Param("id"))
	}
	return ev, nil
}

// getWaitingRoom serves GET /v1/organizer/events/{id}/waiting-room and
// /v1/admin/events/{id}/waiting-room: the live room, read from Redis.
func (s *Server) getWaitingRoom(c echo.Context) error {
	ev, err := s.controlledRoom(c)
	if err != nil {
		return err
	}
	p, err := s.waitRoom.Progress(c.Request().Context(), ev)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, waitingRoomStateOf(ev.ID, p))
}

// patchWaitingRoom serves PATCH /v1/organizer/events/{id}/waiting-room and
// /v1/admin/events/{id}/waiting-room: pause, resume or change the rate of
// the live room. The room is one, in Redis, so every instance admits by the
// change at once and tells its polls within waitroom.ProgressMaxAge. The
// event's own admit_per_second stays the rate its room opened at.
func (s *Server) patchWaitingRoom(c echo.Context) error {
	var in waitingRoomChangeJSON
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ev, err := s.controlledRoom(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p, err := s.waitRoom.Change(ctx, ev, waitroom.Control{Rate: in.AdmitPerSecond, Paused: in.Paused})
	if err != nil {
		return err
	}
	by := "admin"
	if pr := principalOf(c); pr.Kind == auth.Organizer {
		by = "organizer " + pr.AccountID
	}
	s.logger.InfoContext(ctx, "waiting room changed", "event_id", ev.ID, "by", by, "request_id", requestID(c),
		"admit_per_second", p.Rate, "paused", p.Paused)
	return c.JSON(http.StatusOK, waitingRoomStateOf(ev.ID, p))
}
