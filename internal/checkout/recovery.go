package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/scan"
)

// recoveryLock is the advisory lock that lets one instance at a time recover.
const recoveryLock = 0x5eed_0006

// recoveryBatch bounds the pending orders one pass looks at.
const recoveryBatch = 100

// Recovery is what one pass of Recover did.
type Recovery struct {
	Confirmed int // pending orders confirmed: Payrail has their charge
	Declined  int // pending orders declined: Payrail declined their charge
	Released  int // pending orders released: Payrail proves there is no charge
	Unknown   int // pending orders left pending: Payrail cannot tell yet, or could not be asked
	Refunded  int // late charges refunded by reconciliation
	// RefundedAtPayrail counts the confirmed orders found refunded at Payrail,
	// by reconciliation or recovery: each is refunded now, its tickets revoked.
	RefundedAtPayrail int
	Unsettled         int // pending orders older than the recovery age after the pass
}

// Recover settles what checkouts left unsettled, on one instance at a time (the
// others return at once with a zero Recovery):
//
//   - every order pending longer than the recovery age that no checkout holds a
//     lease on is confirmed when Payrail has its charge, declined (its hold
//     active again) when Payrail declined it, and released with its hold when
//     Payrail proves there is none; otherwise it waits, counted;
//   - then reconciliation reads the charges Payrail recorded since the last
//     pass and refunds those whose order was not confirmed, and the refunds
//     Payrail made since its last pass: a confirmed order whose charge was
//     refunded at Payrail becomes refunded, its tickets revoked.
func (s *Service) Recover(ctx context.Context) (Recovery, error) {
	return alone(ctx, s, recoveryLock, "checkout: recover", s.recover)
}

// recover is one pass of Recover, with its lock held.
func (s *Service) recover(ctx context.Context) (Recovery, error) {
	var r Recovery
	stale, err := s.store.stalePending(ctx, s.recoverAfter, recoveryBatch)
	if err != nil {
		return r, err
	}
	for _, o := range stale {
		s.recoverOrder(ctx, o, &r)
	}
	if r.Refunded, err = s.reconcile(ctx); err != nil {
		return r, err
	}
	n, err := s.reconcileRefunds(ctx)
	if r.RefundedAtPayrail += n; err != nil {
		return r, err
	}
	if r.Unsettled, err = s.store.unsettled(ctx, s.recoverAfter); err != nil {
		return r, err
	}
	s.metrics.unsettled.Set(float64(r.Unsettled))
	if r.Unknown > 0 {
		s.unsettled.Failed(fmt.Errorf("%d orders pending past the recovery age: Payrail cannot tell yet whether they were charged", r.Unsettled))
	} else {
		s.unsettled.Succeeded()
	}
	return r, nil
}

// recoverOrder asks Payrail about one stale pending order and settles it when
// the answer is certain. An order it cannot settle now (Payrail cannot tell, or
// the settlement could not be written) is counted unknown; the next pass tries
// again, and the other orders are not held up.
func (s *Service) recoverOrder(ctx context.Context, o pendingOrder, r *Recovery) {
	charge, finding, err := s.payments.Find(ctx, o.ID, o.CreatedAt, o.chargeDeadline)
	if err != nil {
		s.payrail.Failed(err)
	} else {
		s.payrailAnswered()
	}
	if err == nil {
		switch {
		case finding == FindingCharged && len(charge.Refunds) > 0:
			// Refunded at Payrail before anyone here knew it was charged:
			// confirmed and its refunds recorded at once: refunded whole,
			// its tickets never admit (and its buyer is told of the refund,
			// not of the tickets); refunded in part, it keeps its tickets,
			// and its buyer gets them by e-mail.
			_, err = s.store.confirmThen(ctx, o, charge.ID, func(tx pgx.Tx, confirmed Order) error {
				for _, refund := range charge.Refunds {
					if _, err := reconcileSaleRefundIn(ctx, tx, o.ID, refund); err != nil {
						return err
					}
				}
				if live, err := scan.LiveTickets(ctx, tx, o.ID); err != nil || live == 0 {
					return err
				}
				return notifyConfirmed(ctx, tx, confirmed)
			})
			if err == nil {
				r.RefundedAtPayrail++
				s.metrics.providerRefunds.Inc()
			}
		case finding == FindingCharged:
			_, err = s.store.confirm(ctx, o, charge.ID)
		case finding == FindingDeclined:
			err = s.store.endUncharged(ctx, o, Declined)
		case finding == FindingNotCharged:
			err = s.store.endUncharged(ctx, o, Released)
		}
	}
	switch {
	case errors.Is(err, errNotPending): // a checkout settled it meanwhile
	case err != nil || finding == FindingUnknown:
		if err != nil && finding != FindingUnknown {
			s.database.Failed(fmt.Errorf("recovery of order %s: %w", o.ID, err))
		}
		r.Unknown++
		s.metrics.recovered.WithLabelValues("unknown").Inc()
		s.logger.Debug("recovery: the order stays pending", "order_id", o.ID, "error", err)
	case finding == FindingCharged:
		r.Confirmed++
		s.metrics.recovered.WithLabelValues("confirmed").Inc()
		s.logger.Info("recovery: pending order confirmed", "order_id", o.ID, "charge_id", charge.ID)
	case finding == FindingDeclined:
		r.Declined++
		s.metrics.recovered.WithLabelValues("declined").Inc()
		s.logger.Info("recovery: pending order's charge was declined; its hold is active again", "order_id", o.ID, "hold_id", o.HoldID)
	default:
		r.Released++
		s.metrics.recovered.WithLabelValues("released").Inc()
		s.logger.Info("recovery: pending order had no charge; released with its hold", "order_id", o.ID, "hold_id", o.HoldID)
	}
}

// alone runs pass while this instance holds the advisory lock, taken on a
// session of its own (Options.Sessions: never a transaction pooler's), pass's
// work running on the pool. When another instance holds it, pass is not run
// and alone returns at once, T's zero value and nil. Its error says what.
func alone[T any](ctx context.Context, s *Service, lock int64, what string, pass func(context.Context) (T, error)) (T, error) {
	var r T
	conn, err := s.sessions.Acquire(ctx)
	if err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&locked); err != nil || !locked {
		if err != nil {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return r, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)
	if r, err = pass(ctx); err != nil {
		return r, fmt.Errorf("%s: %w", what, err)
	}
	return r, nil
}

// RecoveryEvery is how often RunRecovery runs: a quarter of the recovery age,
// from 250 ms to 15 s.
func (s *Service) RecoveryEvery() time.Duration {
	return min(max(s.recoverAfter/4, 250*time.Millisecond), 15*time.Second)
}

// RunRecovery runs Recover now and then every RecoveryEvery until ctx ends.
// Its failures are logged as the database's outage, not one ERROR each.
func (s *Service) RunRecovery(ctx context.Context) {
	s.runPasses(ctx, "recovery", s.RecoveryEvery(), nil, func(ctx context.Context) error {
		_, err := s.Recover(ctx)
		return err
	})
}

// runPasses runs pass now, then every interval and whenever wake (which may be
// nil) asks, until ctx ends. A pass's failure is logged as the database's
// outage, not one ERROR each.
func (s *Service) runPasses(ctx context.Context, what string, every time.Duration, wake <-chan struct{}, pass func(context.Context) error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		switch err := pass(ctx); {
		case err != nil && ctx.Err() == nil:
			s.database.Failed(fmt.Errorf("%s: %w", what, err))
		case err == nil:
			s.database.Succeeded()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}
