package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/boxoffice"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/paging"
)

// organizerOrderJSON is an order as its event's organizer reads it.
type organizerOrderJSON struct {
	ID         string                `json:"id"`
	Status     string                `json:"status"`
	BuyerEmail string                `json:"buyer_email"`
	TotalCents int64                 `json:"total_cents"`
	Currency   string                `json:"currency"`
	CreatedAt  time.Time             `json:"created_at"`
	Tickets    []organizerTicketJSON `json:"tickets"`
}

// organizerTicketJSON is a ticket of an order as its event's organizer reads
// it: where, its status, who holds it; never its code.
type organizerTicketJSON struct {
	ID          string          `json:"id"`
	Reference   string          `json:"reference"`
	Seat        scannedSeatJSON `json:"seat"`
	Status      string          `json:"status"`
	HolderEmail string          `json:"holder_email"`
}

func organizerOrderOf(o boxoffice.Order) organizerOrderJSON {
	out := organizerOrderJSON{ID: o.ID, Status: o.Status, BuyerEmail: o.BuyerEmail, TotalCents: o.TotalCents,
		Currency: o.Currency, CreatedAt: o.CreatedAt.UTC(), Tickets: make([]organizerTicketJSON, len(o.Tickets))}
	for i, t := range o.Tickets {
		out.Tickets[i] = organizerTicketJSON{ID: t.ID, Reference: t.Reference, Seat: seatJSONOf(t.Seat), Status: t.Status, HolderEmail: t.HolderEmail}
	}
	return out
}

// eventOrders serves GET /v1/organizer/events/{id}/orders?limit=&after= (the
// event's organizer; anyone else's event is 404): a page of its orders,
// newest first, paged as the event list is. next_after, when not null, is
// the after of the next (older) page.
func (s *Server) eventOrders(c echo.Context) error {
	limit, err := pageLimit(c, paging.MaxSize)
	if err != nil {
		return err
	}
	page, err := s.boxOffice.Orders(c.Request().Context(), principalOf(c).AccountID, c.Param("id"), limit, c.QueryParam("after"))
	if err != nil {
		return err
	}
	out := make([]organizerOrderJSON, len(page.Orders))
	for i, o := range page.Orders {
		out[i] = organizerOrderOf(o)
	}
	var next *string
	if page.NextAfter != "" {
		next = &page.NextAfter
	}
	return c.JSON(http.StatusOK, map[string]any{"orders": out, "next_after": next})
}

// attendeesCSV serves GET /v1/organizer/events/{id}/attendees.csv (the
// event's organizer; anyone else's event is 404): the attendee list as a CSV
// download, streamed as the database sends it. A failure before the first
// row is a problem as anywhere; one after it (the database, or the client,
// went away) can only cut the answer short: the connection is aborted, so
// that the download fails rather than ends as if whole.
func (s *Server) attendeesCSV(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if canonical, ok := ids.Parse(id); ok {
		id = canonical // the only kind that opens a list: the header can carry it
	}
	opened := false
	err := s.boxOffice.AttendeesCSV(ctx, principalOf(c).AccountID, id, func() io.Writer {
		opened = true
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set(echo.HeaderContentDisposition, `attachment; filename="attendees-`+id+`.csv"`)
		h.Set("Cache-Control", "no-store")
		c.Response().WriteHeader(http.StatusOK)
		return c.Response()
	})
	if err != nil && opened {
		if ctx.Err() == nil {
			s.logger.Error("attendee list cut short", "request_id", requestID(c), "route", routeOf(c), "error", err)
		}
		panic(http.ErrAbortHandler)
	}
	return err
}

// salesJSON is how an event's sale stands, as its organizer's dashboard reads
// it (GET /v1/organizer/events/{id}/sales).
type salesJSON struct {
	Currency     string             `json:"currency"`
	Capacity     int                `json:"capacity"`
	TicketsSold  int                `json:"tickets_sold"`
	TicketsHeld  int                `json:"tickets_held"`
	RevenueCents int64              `json:"revenue_cents"`
	GrossCents   int64              `json:"gross_cents"`
	Refunded     int64              `json:"refunded_cents"`
	Orders       salesOrdersJSON    `json:"orders"`
	CheckIns     salesCheckInsJSON  `json:"check_ins"`
	Sections     []salesSectionJSON `json:"sections"`
}

// salesOrdersJSON counts an event's orders by status.
type salesOrdersJSON struct {
	Pending           int `json:"pending"`
	Confirmed         int `json:"confirmed"`
	PartiallyRefunded int `json:"partially_refunded"`
	Refunded          int `json:"refunded"`
}

// salesCheckInsJSON is how many of the tickets that admit were scanned.
type salesCheckInsJSON struct {
	Scanned   int `json:"scanned"`
	Admitting int `json:"admitting"`
}

// salesSectionJSON is one section of an event's sale.
type salesSectionJSON struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	GeneralAdmission bool   `json:"general_admission"`
	PriceCents       int64  `json:"price_cents"`
	Capacity         int    `json:"capacity"`
	Sold             int    `json:"sold"`
	Held             int    `json:"held"`
	Available        int    `json:"available"`
	RevenueCents     int64  `json:"revenue_cents"`
}

// eventSales serves GET /v1/organizer/events/{id}/sales (the event's
// organizer; anyone else's event is 404): each section's seats sold, held and
// available and their revenue, the orders by status, the money kept, and the
// check-ins, read now; the organizer's dashboard polls it.
func (s *Server) eventSales(c echo.Context) error {
	sales, err := s.boxOffice.Sales(c.Request().Context(), principalOf(c).AccountID, c.Param("id"))
	if err != nil {
		return err
	}
	o := sales.Orders
	out := salesJSON{Currency: sales.Currency, Capacity: sales.Capacity, TicketsSold: sales.TicketsSold,
		TicketsHeld: sales.TicketsHeld, RevenueCents: o.NetCents, GrossCents: o.GrossCents, Refunded: o.RefundedCents,
		Orders:   salesOrdersJSON{Pending: o.Pending, Confirmed: o.Confirmed, PartiallyRefunded: o.PartiallyRefunded, Refunded: o.Refunded},
		CheckIns: salesCheckInsJSON{Scanned: sales.CheckIns.Scanned, Admitting: sales.CheckIns.Admitting},
		Sections: make([]salesSectionJSON, len(sales.Sections))}
	for i, sec := range sales.Sections {
		out.Sections[i] = salesSectionJSON{ID: sec.ID, Name: sec.Name, GeneralAdmission: sec.GeneralAdmission,
			PriceCents: sec.PriceCents, Capacity: sec.Capacity, Sold: sec.Sold, Held: sec.Held,
			Available: sec.Available, RevenueCents: sec.RevenueCents}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}
