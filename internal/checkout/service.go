package checkout

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/outage"
	"github.com/stagedoor/stagedoor/internal/paging"
	"github.com/stagedoor/stagedoor/internal/text"
)

// Service places, settles, recovers and reads orders.
type Service struct {
	store        store
	sessions     *pgxpool.Pool // where Recover's advisory lock is taken
	payments     *Payments
	recoverAfter time.Duration
	lease        time.Duration
	logger       *slog.Logger
	metrics      *checkoutMetrics
	payrail      *outage.Reporter // Payrail failing to answer a charge
	database     *outage.Reporter // PostgreSQL failing to take a charge's outcome
	unsettled    *outage.Reporter // orders recovery cannot settle: Payrail cannot tell
}

// Options configure a Service.
type Options struct {
	// RecoverAfter is the age past which Recover settles a pending order that
	// no checkout works on (STAGEDOOR_RECOVERY_AFTER).
	RecoverAfter time.Duration
	Logger       *slog.Logger
	// Registerer takes the service's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// TicketKeys, when set, signs the codes of the tickets issued, so that a
	// door can check them offline (internal/ticketsign).
	TicketKeys TicketKeys
	// Sessions, when set, is the pool Recover takes its advisory lock on,
	// instead of db: PostgreSQL itself, when db's URL is a transaction pooler,
	// which would leave a session's lock on whichever server connection ran it.
	Sessions *pgxpool.Pool
}

// TicketKeys gives the private key that signs an event's ticket codes
// (*ticketsign.Keys).
type TicketKeys interface {
	Private(ctx context.Context, eventID string) (ed25519.PrivateKey, error)
}

// NewService returns a Service charging through payments.
func NewService(db *pgxpool.Pool, payments *Payments, o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sessions == nil {
		o.Sessions = db
	}
	return &Service{
		store:        store{db: db, keys: o.TicketKeys},
		sessions:     o.Sessions,
		payments:     payments,
		recoverAfter: o.RecoverAfter,
		lease:        leaseFor(payments.Timeout()),
		logger:       o.Logger,
		metrics:      newMetrics(o.Registerer),
		payrail:      outage.New(o.Logger, "payrail", 0).WithThreshold(payrailFailuresInARow),
		database:     outage.New(o.Logger, "postgresql", 0),
		unsettled:    outage.New(o.Logger, "payrail-ledger", 0),
	}
}

// payrailFailuresInARow is how many of recovery's and reconciliation's calls
// to Payrail must fail in a row, with none answered between, to make an
// outage of Payrail in the log: one is a glitch. (A charge's failures make one
// only once the breaker holds Payrail to be down, and then at once.)
const payrailFailuresInARow = 3

// minSettleTime is the least time a checkout keeps for writing its charge's
// outcome, retrying, after the charge's deadline.
const minSettleTime = 2 * time.Second

// leaseFor is how long a checkout works on its order, at most: the charge's
// deadline, then as long again (at least minSettleTime) to write the outcome.
func leaseFor(paymentTimeout time.Duration) time.Duration {
	return paymentTimeout + max(paymentTimeout, minSettleTime)
}

// The longest Idempotency-Key and payment_token accepted, in characters.
const (
	MaxKeyLength   = 255
	MaxTokenLength = 255
)

// Request is one checkout: a buyer pays for their hold.
type Request struct {
	BuyerID      string
	HoldID       string
	PaymentToken string
	// IdempotencyKey, when not empty, binds the request to the order it writes:
	// a retry with the same key and body answers that order's current state.
	IdempotencyKey string
}

// Check reports an errkind.Invalid error saying what is wrong with the request,
// without writing or reading anything: Checkout does it first, and a caller may
// do it before taking a scarce resource.
func (r Request) Check() error {
	if _, ok := ids.Parse(r.HoldID); !ok {
		return errkind.Invalidf("hold_id must be a hold's id")
	}
	if strings.TrimSpace(r.PaymentToken) == "" {
		return errkind.Invalidf("payment_token is required")
	}
	if err := text.Check("payment_token", r.PaymentToken, MaxTokenLength); err != nil {
		return err
	}
	if looksLikeCardNumber(r.PaymentToken) {
		// The detail never repeats it.
		return errkind.Invalidf("payment_token looks like a card number: send the token Payrail gave for the card, never the card's number")
	}
	return text.Check("Idempotency-Key", r.IdempotencyKey, MaxKeyLength)
}

// Result is what a checkout answers.
type Result struct {
	// Order is the order the request wrote or, when Replayed, the one its
	// Idempotency-Key belongs to, as it stands now: Confirmed with its
	// tickets, or Pending while the charge's outcome is unknown (recovery
	// settles it); for a settled, unsuccessful order the error says which.
	Order Order
	// Replayed: the answer is the key's order, not this request's own attempt.
	Replayed bool
}

// Checkout buys the seats of the buyer's hold. It returns a Result whose order
// is confirmed or pending; or, with the Result still naming the order when one
// was written, an *OrderError wrapping ErrPaymentDeclined (the hold is active
// again), ErrPaymentUnavailable (Payrail certainly made no charge; the hold is
// active again, and a retry with the same key tries again) or ErrOrderReleased;
// or an errkind.Invalid or errkind.NotFound error (no such hold), hold.ErrNotActive,
// ErrIdempotencyInProgress or ErrIdempotencyMismatch, having written nothing.
//
// Once the charge is under way the caller's cancellation no longer stops it: a
// buyer who hangs up mid-payment still gets a settled order.
func (s *Service) Checkout(ctx context.Context, r Request) (Result, error) {
	a, res, err := s.Claim(ctx, r)
	if a == nil {
		return res, err
	}
	return a.Run(ctx)
}

// Order returns one of the buyer's orders, or an errkind.NotFound error.
func (s *Service) Order(ctx context.Context, buyerID, orderID string) (Order, error) {
	orderID, ok := ids.Parse(orderID)
	if !ok {
		return Order{}, errNotFound
	}
	orders, err := s.store.orders(ctx, buyerID, orderID)
	if err != nil {
		return Order{}, err
	}
	if len(orders) == 0 {
		return Order{}, errNotFound
	}
	return orders[0], nil
}

// Orders returns the buyer's orders, newest first.
func (s *Service) Orders(ctx context.Context, buyerID string) ([]Order, error) {
	return s.store.orders(ctx, buyerID, "")
}

// Tickets returns the buyer's tickets.
func (s *Service) Tickets(ctx context.Context, buyerID string) ([]Ticket, error) {
	return s.store.tickets(ctx, buyerID, "", nil)
}

// OrderPage is a page of an event's orders, newest first. NextAfter, when not
// empty, is the after of the next (older) page.
type OrderPage struct {
	Orders    []Order
	NextAfter string
}

// EventOrders returns a page of the event's orders, newest first, without
// their tickets: at most limit (0: paging.DefaultSize), after the cursor after
// (the NextAfter of the page before; empty: from the newest). Orders that sold
// nothing (declined, failed, released) are left out. An errkind.Invalid error
// for a limit or cursor out of range. Whose event it is, the caller decides.
func (s *Service) EventOrders(ctx context.Context, eventID string, limit int, after string) (OrderPage, error) {
	limit, err := paging.Limit(limit)
	if err != nil {
		return OrderPage{}, err
	}
	var from *paging.Cursor
	if after != "" {
		c, err := paging.Parse(after)
		if err != nil {
			return OrderPage{}, err
		}
		from = &c
	}
	id, ok := ids.Parse(eventID)
	if !ok {
		return OrderPage{}, nil
	}
	orders, err := s.store.eventOrders(ctx, id, limit+1, from)
	if err != nil {
		return OrderPage{}, err
	}
	var page OrderPage
	page.Orders, page.NextAfter = paging.Cut(orders, limit, func(o Order) paging.Cursor {
		return paging.Cursor{At: o.CreatedAt, ID: o.ID}
	})
	return page, nil
}

// Revenue returns, for each of eventIDs that sold anything, the total of its
// confirmed orders, in cents (its currency is the event's). A refunded charge
// is never of a confirmed order, so it is not counted.
func (s *Service) Revenue(ctx context.Context, eventIDs []string) (map[string]int64, error) {
	return s.store.revenue(ctx, eventIDs)
}
