package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// store is the SQL of orders, idempotency keys and reconciliation; the hold
// and seat changes that go with them are internal/hold's, and the tickets
// internal/scan's, run in the same transactions. Ids reaching it are valid UUIDs.
type store struct {
	db   *pgxpool.Pool
	keys TicketKeys // nil: tickets get random codes, valid online only
}

// pendingOrder is what the charge and its settlement need of an order.
type pendingOrder struct {
	Order
	chargeDeadline time.Time // on the database's clock
}

// micros is d as the bigint argument of `$n::bigint * interval '1 microsecond'`.
func micros(d time.Duration) int64 { return d.Microseconds() }

// begin starts a checkout in one short transaction: the hold moves to
// checking_out (hold.BeginCheckout: the buyer's, active, unexpired, owning its
// seats, which are then kept while the payment runs), a pending order is
// written with its charge deadline and the checkout's lease on it, and the
// claimed Idempotency-Key, if any, is bound to it. A connection that was dead
// before anything was sent is retried.
func (s store) begin(ctx context.Context, buyerID, holdID string, key *claim, timeout, lease time.Duration) (pendingOrder, error) {
	var o pendingOrder
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		h, err := hold.BeginCheckout(ctx, tx, buyerID, holdID)
		if err != nil {
			return err
		}
		o = pendingOrder{Order: Order{ID: ids.New(), BuyerID: buyerID, HoldID: h.ID, EventID: h.EventID,
			Status: Pending, TotalCents: h.TotalCents, Currency: h.Currency}}
		if err := tx.QueryRow(ctx, `
				INSERT INTO orders (id, buyer_id, hold_id, event_id, total_cents, currency, charge_deadline, lease_until)
				VALUES ($1, $2, $3, $4, $5, $6,
				        now() + $7::bigint * interval '1 microsecond', now() + $8::bigint * interval '1 microsecond')
				RETURNING created_at, charge_deadline`,
			o.ID, buyerID, h.ID, o.EventID, o.TotalCents, o.Currency, micros(timeout), micros(lease)).
			Scan(&o.CreatedAt, &o.chargeDeadline); err != nil {
			return err
		}
		if key != nil {
			return bindKey(ctx, tx, key, o.ID, lease)
		}
		return nil
	})
	switch {
	case err == nil:
		return o, nil
	case errors.Is(err, errkind.NotFound), errors.Is(err, hold.ErrNotActive), errors.Is(err, hold.ErrEventStarted), errors.Is(err, ErrIdempotencyInProgress):
		return pendingOrder{}, err
	}
	return pendingOrder{}, fmt.Errorf("checkout: begin: %w", err)
}

// inTx runs fn in a transaction, committed when fn succeeds. A BEGIN that
// fails started nothing, so it is tried again, up to twice: after PostgreSQL
// terminated the pool's connections (a restart, a failover, an operator's
// pg_terminate_backend) the first one taken may be dead, and the pool is reset
// so that the next try gets a fresh one. A server out of connection slots (or
// another resource: conn.Exhausted) is not reset for: the pool's connections
// are good, and giving them up would only leave it fewer.
func (s store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var tx pgx.Tx
	var err error
	for try := 1; ; try++ {
		if tx, err = s.db.Begin(ctx); err == nil {
			break
		}
		if try == 3 || ctx.Err() != nil {
			return err
		}
		if conn.Unavailable(err) && !conn.Exhausted(err) {
			s.db.Reset()
		}
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op once committed
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// errNotPending: the order was settled by someone else (recovery) first.
var errNotPending = errors.New("the order is no longer pending")

// confirm settles a charged order: the order is confirmed, its hold converted
// (its seats sold), one ticket issued a seat, and the buyer's e-mail of the
// tickets written to the outbox (notifyConfirmed), all in one transaction. It
// returns the confirmed order, or errNotPending when the order was already
// settled.
func (s store) confirm(ctx context.Context, o pendingOrder, chargeID string) (Order, error) {
	return s.confirmThen(ctx, o, chargeID, func(tx pgx.Tx, confirmed Order) error {
		return notifyConfirmed(ctx, tx, confirmed)
	})
}

// confirmThen is confirm, with then run in the same transaction after the
// tickets are issued, given the confirmed order, instead of writing the
// buyer's e-mail (an order refunded as it is confirmed announces no tickets).
func (s store) confirmThen(ctx context.Context, o pendingOrder, chargeID string, then func(pgx.Tx, Order) error) (Order, error) {
	confirmed := o.Order
	code, err := scan.CodeMaker(ctx, s.keys, o.EventID)
	if err != nil {
		return Order{}, fmt.Errorf("checkout: confirm order %s: %w", o.ID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = 'confirmed', charge_id = $2, settled_at = now(), lease_until = NULL
			WHERE id = $1 AND status = 'pending'`, o.ID, chargeID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errNotPending
		}
		seats, err := hold.EndCheckoutSeats(ctx, tx, o.HoldID, hold.Converted)
		if err != nil {
			return err
		}
		confirmed.Status, confirmed.Tickets = Confirmed, make([]Ticket, len(seats))
		issued := make([]scan.NewTicket, len(seats))
		for i, seat := range seats {
			issued[i] = scan.NewTicket{ID: ids.New(), SeatID: seat.SeatID}
			if issued[i].Code, err = code(issued[i].ID); err != nil {
				return err
			}
			confirmed.Tickets[i] = Ticket{Ticket: scan.Ticket{ID: issued[i].ID, OrderID: o.ID, EventID: o.EventID, SeatID: seat.SeatID,
				Section: seat.Section, GeneralAdmission: seat.GeneralAdmission(), Code: issued[i].Code}}
		}
		if err := scan.IssueTickets(ctx, tx, o.ID, o.BuyerID, o.EventID, issued); err != nil {
			return err
		}
		for i := range issued {
			confirmed.Tickets[i].Reference = issued[i].Reference
		}
		return then(tx, confirmed)
	})
	switch {
	case errors.Is(err, errNotPending):
		return Order{}, err
	case err != nil:
		return Order{}, fmt.Errorf("checkout: confirm order %s: %w", o.ID, err)
	}
	return confirmed, nil
}

// holdAfter is what becomes of the hold of an order that ends uncharged.
var holdAfter = map[string]hold.Status{
	Declined: hold.Active,   // the buyer may pay another way
	Failed:   hold.Active,   // Payrail certainly made no charge: the buyer may try again
	Released: hold.Released, // recovery: no charge was found long after; the seats go back on sale
}

// endUncharged settles a pending order that has no charge as status (Declined,
// Failed or Released) and moves its hold on (holdAfter). It returns
// errNotPending when the order was already settled.
func (s store) endUncharged(ctx context.Context, o pendingOrder, status string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE orders SET status = $2, settled_at = now(), lease_until = NULL
			WHERE id = $1 AND status = 'pending'`, o.ID, status)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errNotPending
		}
		_, err = hold.EndCheckout(ctx, tx, o.HoldID, holdAfter[status])
		return err
	})
	if err != nil && !errors.Is(err, errNotPending) {
		return fmt.Errorf("checkout: end order %s as %s: %w", o.ID, status, err)
	}
	return err
}

// endLease gives up the checkout's lease on a pending order whose outcome it
// could not learn or write, so that recovery need not wait for it to lapse. It
// does not wait for a lock on the order (whatever held up the outcome may hold
// it): the lease then lapses by itself.
func (s store) endLease(ctx context.Context, orderID string) error {
	_, err := s.db.Exec(ctx, `
		UPDATE orders SET lease_until = NULL
		WHERE id = (SELECT id FROM orders WHERE id = $1 AND status = 'pending' FOR UPDATE SKIP LOCKED)`, orderID)
	return err
}

// stalePending lists up to limit pending orders created more than olderThan
// ago that no checkout holds a lease on, oldest first.
func (s store) stalePending(ctx context.Context, olderThan time.Duration, limit int) ([]pendingOrder, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id::text, buyer_id::text, hold_id::text, event_id::text, total_cents, currency, created_at, charge_deadline
		FROM orders
		WHERE status = 'pending' AND created_at < now() - $1::bigint * interval '1 microsecond'
		  AND (lease_until IS NULL OR lease_until < now())
		ORDER BY created_at LIMIT $2`, micros(olderThan), limit)
	if err != nil {
		return nil, fmt.Errorf("checkout: list pending orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (pendingOrder, error) {
		o := pendingOrder{Order: Order{Status: Pending}}
		err := row.Scan(&o.ID, &o.BuyerID, &o.HoldID, &o.EventID, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.chargeDeadline)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("checkout: list pending orders: %w", err)
	}
	return orders, nil
}

// unsettled counts the pending orders older than olderThan: those recovery has
// not been able to settle.
func (s store) unsettled(ctx context.Context, olderThan time.Duration) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `
		SELECT count(*) FROM orders
		WHERE status = 'pending' AND created_at < now() - $1::bigint * interval '1 microsecond'`,
		micros(olderThan)).Scan(&n)
	return n, err
}
