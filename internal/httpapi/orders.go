package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/checkout"
)

type orderRequest struct {
	HoldID       string `json:"hold_id"`
	PaymentToken string `json:"payment_token"`
}

type ticketJSON struct {
	ID      string `json:"id"`
	EventID string `json:"event_id"`
	SeatID  string `json:"seat_id"`
	Code    string `json:"code"`
	Status  string `json:"status"`
}

type orderJSON struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	HoldID     string    `json:"hold_id"`
	EventID    string    `json:"event_id"`
	TotalCents int64     `json:"total_cents"`
	Currency   string    `json:"currency"`
	CreatedAt  time.Time `json:"created_at"`
	// RefundedAt is set when a charge that reached Payrail late, for an order
	// that was not confirmed, was refunded.
	RefundedAt *time.Time   `json:"refunded_at,omitempty"`
	Tickets    []ticketJSON `json:"tickets"`
}

func ticketsJSON(ts []checkout.Ticket) []ticketJSON {
	out := make([]ticketJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, ticketJSON{ID: t.ID, EventID: t.EventID, SeatID: t.SeatID, Code: t.Code, Status: t.Status()})
	}
	return out
}

func orderOut(o checkout.Order) orderJSON {
	return orderJSON{ID: o.ID, Status: o.Status, HoldID: o.HoldID, EventID: o.EventID,
		TotalCents: o.TotalCents, Currency: o.Currency, CreatedAt: o.CreatedAt.UTC(), RefundedAt: utc(o.RefundedAt),
		Tickets: ticketsJSON(o.Tickets)}
}

// utc is t in UTC, or nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// checkoutRetryAfter is the Retry-After of a checkout refused for want of a slot.
const checkoutRetryAfter = 2 * time.Second

// takeCheckoutSlot takes one of the instance's checkout slots, or refuses at
// once with 503 and Retry-After: there is no queue, so the checkouts inside
// keep their connections and finish.
func (s *Server) takeCheckoutSlot() (release func(), err error) {
	if !s.checkoutSlots.TryAcquire(1) {
		s.metrics.shed.WithLabelValues("checkout").Inc()
		return nil, &Problem{
			Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
			Detail:     "every checkout slot of this instance is taken; retry shortly",
			RetryAfter: checkoutRetryAfter,
		}
	}
	return func() { s.checkoutSlots.Release(1) }, nil
}

// createOrder serves POST /v1/orders: 201 with the confirmed order, 202 with
// the pending one while the charge's outcome is unknown (Location names it
// either way), or a problem. The request is checked before a checkout slot is
// taken. With an Idempotency-Key, a retry answers the key's order as it stands
// now, marked Idempotent-Replayed (problems included: a declined or released
// order).
func (s *Server) createOrder(c echo.Context) error {
	var in orderRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	req := checkout.Request{
		BuyerID:        principalOf(c).AccountID,
		HoldID:         in.HoldID,
		PaymentToken:   in.PaymentToken,
		IdempotencyKey: c.Request().Header.Get("Idempotency-Key"),
	}
	if err := req.Check(); err != nil {
		return err
	}
	release, err := s.takeCheckoutSlot()
	if err != nil {
		return err
	}
	defer release()
	res, err := s.Checkout.Checkout(c.Request().Context(), req)
	if res.Replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/orders/"+res.Order.ID)
	status := http.StatusCreated
	if res.Order.Status == checkout.Pending {
		status = http.StatusAccepted
	}
	return c.JSON(status, orderOut(res.Order))
}

// listOrders serves GET /v1/orders.
func (s *Server) listOrders(c echo.Context) error {
	orders, err := s.Checkout.Orders(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	out := make([]orderJSON, 0, len(orders))
	for _, o := range orders {
		out = append(out, orderOut(o))
	}
	return c.JSON(http.StatusOK, map[string]any{"orders": out})
}

// getOrder serves GET /v1/orders/{id}.
func (s *Server) getOrder(c echo.Context) error {
	o, err := s.Checkout.Order(c.Request().Context(), principalOf(c).AccountID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, orderOut(o))
}

// listTickets serves GET /v1/tickets.
func (s *Server) listTickets(c echo.Context) error {
	ts, err := s.Checkout.Tickets(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tickets": ticketsJSON(ts)})
}
