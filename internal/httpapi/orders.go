package httpapi

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

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
	ID         string       `json:"id"`
	Status     string       `json:"status"`
	HoldID     string       `json:"hold_id"`
	EventID    string       `json:"event_id"`
	TotalCents int64        `json:"total_cents"`
	Currency   string       `json:"currency"`
	CreatedAt  time.Time    `json:"created_at"`
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
		TotalCents: o.TotalCents, Currency: o.Currency, CreatedAt: o.CreatedAt.UTC(), Tickets: ticketsJSON(o.Tickets)}
}

// bulkhead lets at most the semaphore's size of requests into the route at
// once and refuses the next at once, with 503 and Retry-After: there is no
// queue, so the requests inside keep their connections and finish.
func (s *Server) bulkhead(slots *semaphore.Weighted, bound string, retryAfter time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !slots.TryAcquire(1) {
				s.metrics.shed.WithLabelValues(bound).Inc()
				return &Problem{
					Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
					Detail:     "every checkout slot of this instance is taken; retry shortly",
					RetryAfter: retryAfter,
				}
			}
			defer slots.Release(1)
			return next(c)
		}
	}
}

// createOrder serves POST /v1/orders, inside the checkout bulkhead. With an
// Idempotency-Key, the first response is kept and replayed to every retry with
// the same body; a retry while the first runs gets 409, another body 422.
func (s *Server) createOrder(c echo.Context) error {
	var in orderRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	key := c.Request().Header.Get("Idempotency-Key")
	if len(key) > 255 {
		return badRequest("Idempotency-Key must be 1 to 255 characters")
	}
	buyer := principalOf(c).AccountID
	ctx := c.Request().Context()
	if key == "" {
		order, err := s.checkout.Checkout(ctx, buyer, in.HoldID, in.PaymentToken)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, orderOut(order))
	}

	hash := sha256.Sum256([]byte(in.HoldID + "\x00" + in.PaymentToken))
	stored, err := s.checkout.ClaimKey(ctx, buyer, key, hash[:])
	if err != nil {
		return err
	}
	if stored != nil {
		c.Response().Header().Set("Idempotent-Replayed", "true")
		return replay(c, *stored)
	}

	order, err := s.checkout.Checkout(ctx, buyer, in.HoldID, in.PaymentToken)
	var response checkout.StoredResponse
	if err != nil {
		p, _ := problemFor(err)
		if p.Status >= 500 {
			// Nothing was done that a retry should not do again.
			if ferr := s.checkout.ForgetKey(ctx, buyer, key); ferr != nil {
				s.logger.Error("forget idempotency key", "request_id", requestID(c), "error", ferr)
			}
			return err
		}
		response.Status = p.Status
		response.Body, _ = json.Marshal(problemDocument(p))
	} else {
		response.Status = http.StatusCreated
		response.Body, _ = json.Marshal(orderOut(order))
	}
	if err := s.checkout.KeepResponse(ctx, buyer, key, response); err != nil {
		return err
	}
	return replay(c, response)
}

func replay(c echo.Context, r checkout.StoredResponse) error {
	contentType := echo.MIMEApplicationJSON
	if r.Status >= 400 {
		contentType = "application/problem+json"
	}
	return c.Blob(r.Status, contentType, r.Body)
}

// listOrders serves GET /v1/orders.
func (s *Server) listOrders(c echo.Context) error {
	orders, err := s.checkout.Orders(c.Request().Context(), principalOf(c).AccountID)
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
	o, err := s.checkout.Order(c.Request().Context(), principalOf(c).AccountID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, orderOut(o))
}

// listTickets serves GET /v1/tickets.
func (s *Server) listTickets(c echo.Context) error {
	ts, err := s.checkout.Tickets(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tickets": ticketsJSON(ts)})
}
