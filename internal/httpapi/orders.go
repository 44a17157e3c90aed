package httpapi

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

type orderRequest struct {
	HoldID       string `json:"hold_id"`
	PaymentToken string `json:"payment_token"`
}

// ticketJSON is a ticket: its seat by id and section, and whether that seat is
// a place of general admission (which has no row or number to show).
type ticketJSON struct {
	ID               string `json:"id"`
	EventID          string `json:"event_id"`
	SeatID           string `json:"seat_id"`
	Section          string `json:"section"`
	GeneralAdmission bool   `json:"general_admission"`
	Code             string `json:"code,omitempty"` // none once transferred: it admits no one
	// Reference is its short reference, which the door can type; it stays
	// (a name for the ticket), admitting no one once the ticket does not.
	Reference string `json:"reference"`
	Status    string `json:"status"`
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
	// that was not confirmed, was refunded, or since when a refunded order is.
	RefundedAt    *time.Time   `json:"refunded_at,omitempty"`
	RefundedCents int64        `json:"refunded_cents"`
	Refunds       []refundJSON `json:"refunds"`
	Tickets       []ticketJSON `json:"tickets"`
}

// refundJSON is a refund of an order.
type refundJSON struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Reason      string     `json:"reason"`
	AmountCents int64      `json:"amount_cents"`
	TicketIDs   []string   `json:"ticket_ids"`
	CreatedAt   time.Time  `json:"created_at"`
	SettledAt   *time.Time `json:"settled_at,omitempty"`
}

func ticketsJSON(ts []checkout.Ticket) []ticketJSON {
	out := make([]ticketJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, ticketJSONOf(t))
	}
	return out
}

// ticketJSONOf is a ticket as its holder sees it: a transferred one without
// its code, which its receiver's new ticket replaced.
func ticketJSONOf(t checkout.Ticket) ticketJSON {
	out := ticketJSON{ID: t.ID, EventID: t.EventID, SeatID: t.SeatID, Section: t.Section,
		GeneralAdmission: t.GeneralAdmission, Code: t.Code, Reference: t.Reference, Status: t.Status()}
	if t.Transferred {
		out.Code = ""
	}
	return out
}

func orderOut(o checkout.Order) orderJSON {
	refunds := make([]refundJSON, 0, len(o.Refunds))
	for _, r := range o.Refunds {
		refunds = append(refunds, refundJSON{ID: r.ID, Status: r.Status, Reason: r.Reason, AmountCents: r.AmountCents,
			TicketIDs: r.TicketIDs, CreatedAt: r.CreatedAt.UTC(), SettledAt: utc(r.SettledAt)})
	}
	return orderJSON{ID: o.ID, Status: o.Status, HoldID: o.HoldID, EventID: o.EventID,
		TotalCents: o.TotalCents, Currency: o.Currency, CreatedAt: o.CreatedAt.UTC(), RefundedAt: utc(o.RefundedAt),
		RefundedCents: o.RefundedCents, Refunds: refunds, Tickets: ticketsJSON(o.Tickets)}
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

// bulkhead is the instance's checkout slots: a counter, not a queue.
type bulkhead struct {
	used atomic.Int64
	size int64
}

func newBulkhead(slots int) *bulkhead { return &bulkhead{size: int64(slots)} }

// full reports whether every slot is taken now, without taking one.
func (b *bulkhead) full() bool { return b.used.Load() >= b.size }

// tryTake takes a slot if one is free.
func (b *bulkhead) tryTake() bool {
	for {
		u := b.used.Load()
		if u >= b.size {
			return false
		}
		if b.used.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

func (b *bulkhead) give() { b.used.Add(-1) }

// checkoutShed is the refusal of a checkout for want of a slot, counted.
func (s *Server) checkoutShed() error {
	s.metrics.shed.WithLabelValues(string(limits.CheckoutSlots)).Inc()
	return &Problem{
		Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
		Detail:     "every checkout slot of this instance is taken; retry shortly",
		RetryAfter: checkoutRetryAfter, Extensions: boundMember(string(limits.CheckoutSlots)),
	}
}

// takeCheckoutSlot takes one of the instance's checkout slots, or refuses at
// once with 503 and Retry-After: there is no queue, so the checkouts inside
// keep their connections and finish.
func (s *Server) takeCheckoutSlot() (release func(), err error) {
	if !s.checkoutSlots.tryTake() {
		return nil, s.checkoutShed()
	}
	return s.checkoutSlots.give, nil
}

// createOrder serves POST /v1/orders: 201 with the confirmed order, 202 with
// the pending one while the charge's outcome is unknown (Location names it
// either way), or a problem. In order, each before what it protects:
//
//  1. the body is checked (a card number as payment_token is a 400);
//  2. the Idempotency-Key is claimed: a retry whose key already has its answer
//     is answered with the key's order as it stands now, marked
//     Idempotent-Replayed (problems included: a declined or released order);
//     it attempts nothing, so it spends no token and takes no slot, however
//     often a buyer asks;
//  3. admitPayment: the payment breaker, checkout-buyer and checkout-hold,
//     then a checkout slot;
//  4. the checkout.
//
// A refusal at 3 gives the key up: nothing was written or charged.
func (s *Server) createOrder(c echo.Context) error {
	var in orderRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	buyer := principalOf(c).AccountID
	req := checkout.Request{
		BuyerID:        buyer,
		HoldID:         in.HoldID,
		PaymentToken:   in.PaymentToken,
		IdempotencyKey: c.Request().Header.Get("Idempotency-Key"),
	}
	attempt, res, err := s.checkout.Claim(ctx, req)
	if attempt == nil {
		return answerOrder(c, res, err)
	}
	release, err := s.admitPayment(c, buyer, attempt.HoldID(), attempt.Again())
	if err != nil {
		attempt.Abandon(ctx)
		return err
	}
	defer release()
	res, err = attempt.Run(ctx)
	return answerOrder(c, res, err)
}

// admitPayment lets a payment attempt of the buyer on the hold into a
// checkout slot, or refuses it; release gives the slot back. A refusal spends
// nothing another would: while the payment breaker holds Payrail to be down,
// 503 at once; when every slot is taken, 503 (no token spent: the buyer's
// retry after Retry-After must not cost a second one); then checkout-buyer
// and checkout-hold, as one decision, before the slot is taken (a card tester
// past its limit never holds one); then the slot (lost in between: 503).
// checkout-hold caps the cards tried on a hold, so a retry of an attempt that
// certainly charged nothing (again: the same key, card and hold) spends
// checkout-buyer only: a buyer whose payment failed through no fault of theirs
// is not locked out of their seats by retrying it.
func (s *Server) admitPayment(c echo.Context, buyer, holdID string, again bool) (release func(), err error) {
	if err := s.checkout.PaymentRefused(buyer); err != nil {
		return nil, err
	}
	if s.checkoutSlots.full() {
		return nil, s.checkoutShed()
	}
	checks := []ratelimit.Check{{Limit: limits.CheckoutBuyer, Key: buyer}}
	if !again {
		checks = append(checks, ratelimit.Check{Limit: limits.CheckoutHold, Key: buyerAndHoldKey(buyer, holdID)})
	}
	if err := s.enforce(c, checks...); err != nil {
		return nil, err
	}
	return s.takeCheckoutSlot()
}

// answerOrder writes a checkout's answer: 201 with a confirmed order, 202 with
// a pending one, or its problem; Idempotent-Replayed when it is the key's.
func answerOrder(c echo.Context, res checkout.Result, err error) error {
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
