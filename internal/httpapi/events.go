package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/paging"
	"github.com/stagedoor/stagedoor/internal/text"
)

type eventRequest struct {
	Name         string           `json:"name"`
	Venue        string           `json:"venue"`
	Description  string           `json:"description"`
	StartsAt     string           `json:"starts_at"`
	OnSaleAt     string           `json:"on_sale_at"`
	RefundsUntil string           `json:"refunds_until"`
	Currency     string           `json:"currency"`
	Sections     []sectionRequest `json:"sections"`
	WaitingRoom  *waitingRoomJSON `json:"waiting_room"`
}

// sectionRequest is a seated section (rows, seats_per_row) or one of general
// admission (general_admission true, capacity).
type sectionRequest struct {
	Name             string `json:"name"`
	GeneralAdmission bool   `json:"general_admission"`
	Rows             int    `json:"rows"`
	SeatsPerRow      int    `json:"seats_per_row"`
	Capacity         int    `json:"capacity"`
	PriceCents       *int64 `json:"price_cents"`
}

type waitingRoomJSON struct {
	AdmitPerSecond int `json:"admit_per_second"`
}

// draft turns the request into the event package's Draft; only the wire
// formats are checked here (times, a missing price), the rest by event.
func (in eventRequest) draft(organizerID string) (event.Draft, error) {
	d := event.Draft{OrganizerID: organizerID, Name: in.Name, Venue: in.Venue, Description: in.Description, Currency: in.Currency}
	var err error
	if d.StartsAt, err = parseTime("starts_at", in.StartsAt); err != nil {
		return d, err
	}
	if d.OnSaleAt, err = parseTime("on_sale_at", in.OnSaleAt); err != nil {
		return d, err
	}
	until, err := parseTime("refunds_until", in.RefundsUntil)
	if err != nil {
		return d, err
	}
	if !until.IsZero() {
		d.RefundsUntil = &until
	}
	for i, sec := range in.Sections {
		if sec.PriceCents == nil {
			return d, errkind.Invalidf("sections[%d].price_cents is required (0 for free seats)", i)
		}
		d.Sections = append(d.Sections, event.Section{Name: sec.Name, GeneralAdmission: sec.GeneralAdmission,
			Rows: sec.Rows, SeatsPerRow: sec.SeatsPerRow, Capacity: sec.Capacity, PriceCents: *sec.PriceCents})
	}
	if in.WaitingRoom != nil {
		d.WaitingRoom = &event.WaitingRoom{AdmitPerSecond: in.WaitingRoom.AdmitPerSecond}
	}
	return d, nil
}

// parseTime reads an RFC 3339 time of at most maxTimeLength characters; empty
// is the zero time.
func parseTime(field, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	if len(value) > maxTimeLength {
		return time.Time{}, errkind.Invalidf("%s is longer than %d characters, the longest RFC 3339 time (nanoseconds and an offset)", field, maxTimeLength)
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return time.Time{}, errkind.Invalidf("%s %s must be an RFC 3339 time such as 2026-09-01T19:30:00Z", field, text.Describe(value))
	}
	return t.UTC(), nil
}

// sectionJSON is a section of an event as the API shows it: rows and
// seats_per_row only when it is seated.
type sectionJSON struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	GeneralAdmission bool   `json:"general_admission"`
	Rows             int    `json:"rows,omitempty"`
	SeatsPerRow      int    `json:"seats_per_row,omitempty"`
	PriceCents       int64  `json:"price_cents"`
	Capacity         int    `json:"capacity"`
	Available        int    `json:"available"`
}

type eventJSON struct {
	ID             string           `json:"id"`
	Name           string           `json:"name"`
	Venue          string           `json:"venue"`
	Description    string           `json:"description"`
	Status         string           `json:"status"`
	StartsAt       time.Time        `json:"starts_at"`
	OnSaleAt       time.Time        `json:"on_sale_at"`
	RefundsUntil   *time.Time       `json:"refunds_until"`
	OrganizerID    string           `json:"organizer_id"`
	Currency       string           `json:"currency"`
	WaitingRoom    *waitingRoomJSON `json:"waiting_room"`
	Sections       []sectionJSON    `json:"sections,omitempty"`
	SeatsTotal     int              `json:"seats_total"`
	SeatsAvailable int              `json:"seats_available"`
	// FromPriceCents is the lowest section price; null when there is none.
	FromPriceCents *int64 `json:"from_price_cents"`
	// ImageURL is where its image is served (GET /v1/events/{id}/image); null: none.
	ImageURL    *string   `json:"image_url"`
	ImageWidth  int       `json:"image_width,omitempty"`
	ImageHeight int       `json:"image_height,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// organizerEventJSON is an event as its organizer sees it.
type organizerEventJSON struct {
	eventJSON
	SeatsHeld    int   `json:"seats_held"`
	SeatsSold    int   `json:"seats_sold"`
	RevenueCents int64 `json:"revenue_cents"` // what its orders took and kept
	// Cancellation is the progress of its refunds once it is cancelled.
	Cancellation *cancellationJSON `json:"cancellation"`
}

// cancellationJSON is the progress of a cancelled event's refunds.
type cancellationJSON struct {
	Orders   int  `json:"orders"`
	Refunded int  `json:"refunded"`
	Pending  int  `json:"pending"`
	Done     bool `json:"done"`
}

func eventJSONOf(e event.Event) eventJSON {
	out := eventJSON{
		ID: e.ID, Name: e.Name, Venue: e.Venue, Description: e.Description, Status: e.Status,
		StartsAt: e.StartsAt, OnSaleAt: e.OnSaleAt, RefundsUntil: e.RefundsUntil,
		OrganizerID: e.OrganizerID, Currency: e.Currency, CreatedAt: e.CreatedAt,
		SeatsTotal: e.SeatsTotal, SeatsAvailable: e.SeatsAvailable, FromPriceCents: e.FromPriceCents,
		ImageURL: imageURL(e), ImageWidth: e.Image.Width, ImageHeight: e.Image.Height,
	}
	if e.WaitingRoom != nil {
		out.WaitingRoom = &waitingRoomJSON{AdmitPerSecond: e.WaitingRoom.AdmitPerSecond}
	}
	for _, s := range e.Sections {
		out.Sections = append(out.Sections, sectionJSON{ID: s.ID, Name: s.Name, GeneralAdmission: s.GeneralAdmission,
			Rows: s.Rows, SeatsPerRow: s.SeatsPerRow, PriceCents: s.PriceCents, Capacity: s.Capacity, Available: s.Available})
	}
	return out
}

// createEvent serves POST /v1/events (organizer): the event and its seats.
func (s *Server) createEvent(c echo.Context) error {
	var in eventRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	d, err := in.draft(principalOf(c).AccountID)
	if err != nil {
		return err
	}
	e, err := s.events.Create(c.Request().Context(), d)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/events/"+e.ID)
	return c.JSON(http.StatusCreated, eventJSONOf(e))
}

// listEvents serves GET /v1/events?limit=&after=&include_past= (public), from
// snapshots at most 1 s old: a page of events yet to start (all events with
// include_past=true), soonest first. next_after, when not null, is the after
// of the next page.
func (s *Server) listEvents(c echo.Context) error {
	limit, err := pageLimit(c, paging.MaxSize)
	if err != nil {
		return err
	}
	past, err := queryBool(c, "include_past")
	if err != nil {
		return err
	}
	page, err := s.events.List(c.Request().Context(), event.ListQuery{Limit: limit, After: c.QueryParam("after"), IncludePast: past})
	if err != nil {
		return err
	}
	out := make([]eventJSON, 0, len(page.Events))
	for _, e := range page.Events {
		out = append(out, eventJSONOf(e))
	}
	var next *string
	if page.NextAfter != "" {
		next = &page.NextAfter
	}
	return c.JSON(http.StatusOK, map[string]any{"events": out, "next_after": next})
}

// getEvent serves GET /v1/events/{id} (public).
func (s *Server) getEvent(c echo.Context) error {
	e, err := s.events.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, eventJSONOf(e))
}

// organizerEvents serves GET /v1/organizer/events: the organizer's own events
// with their seats held and sold, their revenue, and their cancellation's
// progress.
func (s *Server) organizerEvents(c echo.Context) error {
	events, err := s.events.ListByOrganizer(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	out, err := s.organizerView(c, events)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"events": out})
}

// seatMap serves GET /v1/events/{id}/seats (public) from the event's snapshot,
// encoded once per snapshot.
func (s *Server) seatMap(c echo.Context) error {
	m, err := s.events.SeatMap(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	enc, err := s.seatMapBodies.body(m)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=1")
	// A 5,000-seat map is about 600 KB of JSON and a tenth of that
	// compressed, once per snapshot for every reader of it.
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) && len(enc.body) >= compressMin {
		if gz := enc.gz.compressed(enc.body); gz != nil {
			h.Set("Content-Encoding", "gzip")
			return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, gz)
		}
	}
	return c.JSONBlob(http.StatusOK, enc.body)
}
