package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// eventChange is the body of PATCH /v1/organizer/events/{id}: each field sent
// is changed; refunds_until null removes the refund window.
type eventChange struct {
	Name         *string       `json:"name"`
	Venue        *string       `json:"venue"`
	Description  *string       `json:"description"`
	StartsAt     *string       `json:"starts_at"`
	RefundsUntil optionalValue `json:"refunds_until"`
}

// optionalValue is a member that may be left out, null or a string: Set when
// it was sent, Value nil for null.
type optionalValue struct {
	Set   bool
	Value *string
}

// UnmarshalJSON records that the member was sent, and its string or null.
func (o *optionalValue) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// patch turns the change into the event package's Patch; only the wire
// formats are checked here, the rest by event.
func (in eventChange) patch() (event.Patch, error) {
	p := event.Patch{Name: in.Name, Venue: in.Venue, Description: in.Description, SetRefundsUntil: in.RefundsUntil.Set}
	if in.Name == nil && in.Venue == nil && in.Description == nil && in.StartsAt == nil && !in.RefundsUntil.Set {
		return p, errkind.Invalidf("the change is empty: send name, venue, description, starts_at or refunds_until")
	}
	if in.StartsAt != nil {
		t, err := parseTime("starts_at", *in.StartsAt)
		if err != nil || t.IsZero() {
			return p, errkind.Invalidf("starts_at must be an RFC 3339 time such as 2026-09-01T19:30:00Z")
		}
		p.StartsAt = &t
	}
	if v := in.RefundsUntil.Value; v != nil {
		t, err := parseTime("refunds_until", *v)
		if err != nil || t.IsZero() {
			return p, errkind.Invalidf("refunds_until must be an RFC 3339 time such as 2026-09-01T17:00:00Z, or null")
		}
		p.RefundsUntil = &t
	}
	return p, nil
}

// organizerView is the organizer's view of their events: each with its
// seats held and sold, its revenue and its cancellation's progress.
func (s *Server) organizerView(c echo.Context, events []event.Event) ([]organizerEventJSON, error) {
	ctx := c.Request().Context()
	eventIDs := make([]string, len(events))
	for i, e := range events {
		eventIDs[i] = e.ID
	}
	revenue, err := s.checkout.Revenue(ctx, eventIDs)
	if err != nil {
		return nil, err
	}
	cancellations, err := s.checkout.Cancellations(ctx, eventIDs)
	if err != nil {
		return nil, err
	}
	out := make([]organizerEventJSON, 0, len(events))
	for _, e := range events {
		v := organizerEventJSON{eventJSON: eventJSONOf(e), SeatsHeld: e.SeatsHeld, SeatsSold: e.SeatsSold, RevenueCents: revenue[e.ID]}
		if p, ok := cancellations[e.ID]; ok {
			v.Cancellation = &cancellationJSON{Orders: p.Orders, Refunded: p.Refunded, Pending: p.Pending, Done: p.Done}
		}
		out = append(out, v)
	}
	return out, nil
}

// answerOwnEvent answers one of the organizer's events, read now, as they see
// it, with status.
func (s *Server) answerOwnEvent(c echo.Context, status int) error {
	e, err := s.events.Own(c.Request().Context(), principalOf(c).AccountID, c.Param("id"))
	if err != nil {
		return err
	}
	view, err := s.organizerView(c, []event.Event{e})
	if err != nil {
		return err
	}
	return c.JSON(status, view[0])
}

// organizerEvent serves GET /v1/organizer/events/{id}: one of the
// organizer's events, read now, with its cancellation's progress.
func (s *Server) organizerEvent(c echo.Context) error {
	return s.answerOwnEvent(c, http.StatusOK)
}

// changeEvent serves PATCH /v1/organizer/events/{id}: the organizer changes
// the event's name, venue, description, start or refund window, within the
// rules of event.Service.Update.
func (s *Server) changeEvent(c echo.Context) error {
	var in eventChange
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	p, err := in.patch()
	if err != nil {
		return err
	}
	if _, err := s.events.Update(c.Request().Context(), principalOf(c).AccountID, c.Param("id"), p); err != nil {
		return err
	}
	return s.answerOwnEvent(c, http.StatusOK)
}

// cancelEvent serves POST /v1/organizer/events/{id}/cancel: 202 with the
// event cancelled and its refunds' progress (checkout.Service.CancelEvent);
// the refunds are made in the background.
func (s *Server) cancelEvent(c echo.Context) error {
	if _, err := s.checkout.CancelEvent(c.Request().Context(), principalOf(c).AccountID, c.Param("id")); err != nil {
		return err
	}
	return s.answerOwnEvent(c, http.StatusAccepted)
}
