package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

type holdRequest struct {
	EventID string           `json:"event_id"`
	SeatIDs []string         `json:"seat_ids"`
	General []generalRequest `json:"general"`
}

// generalRequest asks for places of a section of general admission.
type generalRequest struct {
	SectionID string `json:"section_id"`
	Quantity  int    `json:"quantity"`
}

type holdJSON struct {
	ID         string       `json:"id"`
	EventID    string       `json:"event_id"`
	SeatIDs    []string     `json:"seat_ids"`
	General    []placesJSON `json:"general"`
	Status     hold.Status  `json:"status"`
	ExpiresAt  time.Time    `json:"expires_at"`
	TotalCents int64        `json:"total_cents"`
	Currency   string       `json:"currency"`
	CreatedAt  time.Time    `json:"created_at"`
}

// placesJSON are a hold's places of one section of general admission.
type placesJSON struct {
	SectionID string `json:"section_id"`
	Section   string `json:"section"`
	Quantity  int    `json:"quantity"`
}

// soldOutJSON is a section of a sold-out problem's sold_out_sections.
type soldOutJSON struct {
	SectionID string `json:"section_id"`
	Section   string `json:"section"`
	Asked     int    `json:"asked"`
	Available int    `json:"available"`
}

func soldOutSections(e *hold.SoldOutError) []soldOutJSON {
	out := make([]soldOutJSON, len(e.Sections))
	for i, s := range e.Sections {
		out[i] = soldOutJSON(s)
	}
	return out
}

// holdJSONOf is a hold as the API shows it: a hold being checked out is still
// the buyer's, so it shows as active (the contract's statuses are active,
// expired, released and converted).
func holdJSONOf(h hold.Hold) holdJSON {
	status := h.Status
	if status == hold.CheckingOut {
		status = hold.Active
	}
	general := make([]placesJSON, len(h.General))
	for i, g := range h.General {
		general[i] = placesJSON(g)
	}
	return holdJSON{ID: h.ID, EventID: h.EventID, SeatIDs: h.SeatIDs, General: general, Status: status,
		ExpiresAt: h.ExpiresAt, TotalCents: h.TotalCents, Currency: h.Currency, CreatedAt: h.CreatedAt}
}

// createHold serves POST /v1/holds (buyer). In order: the body is checked and
// the event read (cached) without spending a token, so that a malformed request
// or one before the sale opens costs the buyer nothing; on an event with a
// waiting room, the buyer's admission is checked next (one Redis call the first
// time on this instance, then from memory until it ends; 403 not-admitted, or
// 503 when Redis cannot answer), so that a buyer not yet admitted spends no hold
// token either; then hold-buyer and hold-organizer are decided as one decision
// (a request refused by either spends no token of the other) and the request
// counts in flight (buyer-concurrency), hold-buyer and the lease in one Redis
// script (a request refused by buyer-concurrency spends no token either); then
// the hold is written.
func (s *Server) createHold(c echo.Context) error {
	var in holdRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	buyer := principalOf(c).AccountID
	general := make([]hold.General, len(in.General))
	for i, g := range in.General {
		general[i] = hold.General(g)
	}
	plan, err := s.holds.Plan(ctx, buyer, in.EventID, in.SeatIDs, general...)
	if err != nil {
		return err
	}
	if err := s.waitRoom.CheckAdmitted(ctx, plan.Event, buyer); err != nil {
		return err
	}
	leave, err := s.enforceAndEnter(c,
		ratelimit.Check{Limit: limits.HoldBuyer, Key: buyer},
		ratelimit.Check{Limit: limits.HoldOrganizer, Key: plan.Event.OrganizerID},
	)
	if err != nil {
		return err
	}
	defer leave()
	h, err := s.holds.Place(ctx, plan)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/holds/"+h.ID)
	return c.JSON(http.StatusCreated, holdJSONOf(h))
}

// getHold serves GET /v1/holds/{id} (its buyer; anyone else gets 404).
func (s *Server) getHold(c echo.Context) error {
	h, err := s.holds.Get(c.Request().Context(), principalOf(c).AccountID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, holdJSONOf(h))
}

// releaseHold serves DELETE /v1/holds/{id} (its buyer): its seats are
// available again at once.
func (s *Server) releaseHold(c echo.Context) error {
	if err := s.holds.Release(c.Request().Context(), principalOf(c).AccountID, c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
