package checkout

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/text"
)

// A refund gives tickets of a confirmed order back, with their money, through
// Payrail, with the truth rules of a charge:
//
//  1. one transaction holds the order's row, checks who asks (its buyer,
//     within the event's refund window; its event's organizer, at any time;
//     the cancellation of its event), holds the tickets for the refund
//     (scan.HoldForRefund: refund_pending, admitting no one, refundable by no
//     one else) and writes the refund, pending, with its amount: what the
//     tickets' seats cost, at most what is left of the charge;
//  2. Payrail is asked, with the refund's id as its Idempotency-Key and no
//     database connection held;
//  3. by its answer, one transaction settles the refund: succeeded, the
//     tickets refunded and revoked, their seats back on sale (hold.Resell),
//     the order partially_refunded or refunded; refused (Payrail made none),
//     failed, the tickets valid again; no answer in time, it stays pending,
//     and the refund pass (one instance at a time) sends the same key again
//     until Payrail answers. A refund is never recorded that Payrail does not
//     hold, and one key is one refund at Payrail: money goes back once.
//
// A client's Idempotency-Key belongs to the refund its request wrote: a
// retry with the same key and body answers that refund's order as it stands
// now; another body is ErrIdempotencyMismatch.

// Errors of refunds; internal/httpapi maps them to problems. A ticket that
// cannot be refunded is scan.ErrNotRefundable.
var (
	// ErrRefundWindowClosed: the order's buyer asked after the event's refund
	// window closed, or the event has none.
	ErrRefundWindowClosed = errors.New("refunds of this event are closed")
	// ErrRefundRefused: Payrail refused the refund; nothing was refunded,
	// and the tickets are valid again.
	ErrRefundRefused = errors.New("the payment provider refused the refund; nothing was refunded")
)

// The reasons of a refund: who asked.
const (
	ByBuyer        = "buyer"
	ByOrganizer    = "organizer"
	ByCancellation = "cancellation"
	AtPayrail      = "payrail" // made at Payrail by someone else
)

// The states of a refund.
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// MaxRefundTickets bounds the ticket_ids of one refund request.
const MaxRefundTickets = 100

// OrderRefund is a refund of some of an order's tickets and money.
type OrderRefund struct {
	ID          string
	OrderID     string
	Reason      string // ByBuyer, ByOrganizer, ByCancellation or AtPayrail
	TicketIDs   []string
	AmountCents int64
	Status      string // RefundPending, RefundSucceeded or RefundFailed
	CreatedAt   time.Time
	SettledAt   *time.Time
}

// RefundRequest asks for a refund of an order's tickets.
type RefundRequest struct {
	// AccountID asks: the order's buyer, or with Organizer its event's
	// organizer. Anyone else's request is errkind.NotFound.
	AccountID string
	Organizer bool
	OrderID   string
	// TicketIDs are the tickets to refund; none: every ticket of the order
	// that can be.
	TicketIDs []string
	// IdempotencyKey, when not empty, binds the request to the refund it
	// writes.
	IdempotencyKey string
}

// RefundResult is what a refund request answers: the refund and its order as
// they stand now.
type RefundResult struct {
	Refund OrderRefund
	Order  Order
	// Replayed: the answer is the key's refund, not this request's own.
	Replayed bool
}

// check validates the request and returns its ticket ids, canonical and in
// order, without reading anything.
func (r RefundRequest) check() (orderID string, ticketIDs []string, err error) {
	orderID, ok := ids.Parse(r.OrderID)
	if !ok {
		return "", nil, errNotFound
	}
	if len(r.TicketIDs) > MaxRefundTickets {
		return "", nil, errkind.Invalidf("ticket_ids lists %d tickets; at most %d", len(r.TicketIDs), MaxRefundTickets)
	}
	for i, raw := range r.TicketIDs {
		id, ok := ids.Parse(raw)
		if !ok {
			return "", nil, errkind.Invalidf("ticket_ids[%d] %s is not a ticket id", i, text.Describe(raw))
		}
		if slices.Contains(ticketIDs, id) {
			return "", nil, errkind.Invalidf("ticket_ids lists ticket %s more than once", id)
		}
		ticketIDs = append(ticketIDs, id)
	}
	slices.Sort(ticketIDs)
	return orderID, ticketIDs, text.Check("Idempotency-Key", r.IdempotencyKey, MaxKeyLength)
}

// refundHash identifies a refund request's body: a key reused with another
// body is refused.
func refundHash(orderID string, ticketIDs []string) []byte {
	h := sha256.Sum256([]byte(orderID + "\x00" + strings.Join(ticketIDs, ",")))
	return h[:]
}

// Refund refunds tickets of an order (see RefundRequest) and returns the
// refund with the order as it stands: the refund succeeded (its tickets
// refunded), or pending while Payrail's answer is unknown (its tickets
// refund_pending; the refund pass settles it). It fails with an
// errkind.NotFound error (no such order of the buyer's, or of the
// organizer's events), ErrRefundWindowClosed (a buyer, after the event's
// window), scan.ErrNotRefundable (scanned, refunded, pending or given
// tickets; an order that is not confirmed), an *OrderError wrapping
// ErrRefundRefused (Payrail refused it: nothing refunded), an errkind.Invalid
// error, ErrIdempotencyMismatch; nothing is refunded then.
func (s *Service) Refund(ctx context.Context, r RefundRequest) (RefundResult, error) {
	orderID, ticketIDs, err := r.check()
	if err != nil {
		return RefundResult{}, err
	}
	var key *refundKey
	if r.IdempotencyKey != "" {
		key = &refundKey{by: r.AccountID, key: r.IdempotencyKey, hash: refundHash(orderID, ticketIDs)}
		if res, done, err := s.replayRefund(ctx, r, key); done {
			return res, err
		}
	}
	ref, chargeID, err := s.store.beginRefund(ctx, s.events, refundStart{
		orderID: orderID, ticketIDs: ticketIDs, by: r.AccountID, organizer: r.Organizer, key: key, lease: s.lease})
	if errors.Is(err, errKeyTaken) {
		res, _, err := s.replayRefund(ctx, r, key)
		return res, err
	}
	if err != nil {
		return RefundResult{}, err
	}
	ctx = context.WithoutCancel(ctx) // the buyer hanging up stops nothing now
	ref = s.driveRefund(ctx, ref, chargeID)
	return s.refundAnswer(ctx, r, ref, false)
}

// replayRefund answers a request whose Idempotency-Key has its refund (done):
// that refund and its order as they stand, or ErrIdempotencyMismatch.
func (s *Service) replayRefund(ctx context.Context, r RefundRequest, key *refundKey) (RefundResult, bool, error) {
	ref, hash, found, err := s.store.refundOfKey(ctx, key.by, key.key)
	switch {
	case err != nil:
		return RefundResult{}, true, err
	case !found:
		return RefundResult{}, false, nil
	case string(hash) != string(key.hash):
		return RefundResult{}, true, ErrIdempotencyMismatch
	}
	res, err := s.refundAnswer(ctx, r, ref, true)
	return res, true, err
}

// refundAnswer reads the refund and its order as they stand and says what
// the request answers: the result, and an *OrderError wrapping
// ErrRefundRefused for a failed refund.
func (s *Service) refundAnswer(ctx context.Context, r RefundRequest, ref OrderRefund, replayed bool) (RefundResult, error) {
	o, err := s.store.orderByID(ctx, ref.OrderID)
	if err != nil {
		return RefundResult{}, err
	}
	if i := slices.IndexFunc(o.Refunds, func(x OrderRefund) bool { return x.ID == ref.ID }); i >= 0 {
		ref = o.Refunds[i]
	}
	res := RefundResult{Refund: ref, Order: o, Replayed: replayed}
	if ref.Status == RefundFailed {
		return res, &OrderError{OrderID: o.ID, Err: ErrRefundRefused}
	}
	return res, nil
}

// driveRefund asks Payrail for a pending refund and settles it by the
// answer, and returns it as it stands: succeeded, failed, or still pending
// when Payrail's answer is unknown (the refund pass asks again) or could not
// be written in time.
func (s *Service) driveRefund(ctx context.Context, ref OrderRefund, chargeID string) OrderRefund {
	if ref.AmountCents == 0 {
		// Nothing to give back (free tickets, or all the charge given back
		// already): Payrail has nothing to do.
		return s.settleRefund(ctx, ref, "", nil)
	}
	s.metrics.refundCalls.Inc()
	got, err := s.payments.Refund(ctx, chargeID, ref.ID, ref.AmountCents)
	switch {
	case err == nil:
		s.payrailAnswered()
		return s.settleRefund(ctx, ref, got.ID, nil)
	case errors.Is(err, errRefundRefused):
		s.payrailAnswered()
		s.logger.Warn("refund: Payrail refused a refund; its tickets are valid again",
			"refund_id", ref.ID, "order_id", ref.OrderID, "error", err)
		return s.settleRefund(ctx, ref, "", err)
	}
	s.payrail.Failed(err)
	s.logger.Debug("refund: Payrail's answer is unknown; the refund stays pending", "refund_id", ref.ID, "error", err)
	s.store.refundUnanswered(ctx, ref.ID, err)
	return ref
}

// settleRefund writes Payrail's answer to a pending refund: succeeded when
// refused is nil (payrailID names Payrail's refund; empty for a refund of
// nothing), else failed. It is retried until the lease is nearly over; a
// refund whose answer could not be written stays pending, for the refund
// pass, which asks Payrail again (it answers the same).
func (s *Service) settleRefund(ctx context.Context, ref OrderRefund, payrailID string, refused error) OrderRefund {
	err := s.retry(ctx, time.Now().Add(s.lease/2), func(ctx context.Context) error {
		return s.store.settleRefund(ctx, ref.ID, payrailID, refused)
	})
	switch {
	case err == nil && refused == nil:
		ref.Status = RefundSucceeded
		s.metrics.orderRefunds.WithLabelValues(ref.Reason, RefundSucceeded).Inc()
	case err == nil:
		ref.Status = RefundFailed
		s.metrics.orderRefunds.WithLabelValues(ref.Reason, RefundFailed).Inc()
	case errors.Is(err, errNotPending): // settled by another (the pass, reconciliation)
	default:
		s.logger.Warn("refund: could not write Payrail's answer in time; the refund pass will",
			"refund_id", ref.ID, "error", err)
		s.store.refundUnanswered(ctx, ref.ID, err)
	}
	return ref
}

// refundKey is a client's Idempotency-Key for a refund.
type refundKey struct {
	by, key string
	hash    []byte
}

// errRefundsPending: the order has refunds pending; a cancellation's refund
// of all that is left waits until they are settled.
var errRefundsPending = errors.New("checkout: the order has refunds pending")

// errKeyTaken: another request wrote a refund with the key first.
var errKeyTaken = errors.New("checkout: the Idempotency-Key was taken by another request")

// notRefundable is scan.ErrNotRefundable saying why an order is not.
func notRefundable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{scan.ErrNotRefundable}, args...)...)
}
