package checkout

import (
	"context"
	"errors"
	"time"
)

// attempt runs one checkout of the hold: it writes the pending order (binding
// key to it), charges, and settles the order by what Payrail answered. Writing
// an outcome is retried until the checkout's lease is nearly over; an outcome
// that could not be learned or written leaves the order pending, for recovery.
func (s *Service) attempt(ctx context.Context, buyerID, holdID, token string, key *claim) (Result, error) {
	if s.payments.Refusing(buyerID) {
		return Result{}, errBreakerOpen // nothing written: refusing costs no write
	}
	start := time.Now()
	// The deadline counts from before the order is written, so that the
	// order's stored charge_deadline is never earlier than the real one.
	chargeCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), start.Add(s.payments.Timeout()))
	defer cancel()
	settleBy := start.Add(s.lease - s.lease/10)

	o, err := s.store.begin(ctx, buyerID, holdID, key, s.payments.Timeout(), s.lease)
	if err != nil {
		return Result{}, err
	}
	ctx = context.WithoutCancel(ctx)
	charge, err := s.payments.Charge(chargeCtx, buyerID, o.ID, o.TotalCents, o.Currency, token)
	switch {
	case err == nil:
		s.payrail.Succeeded()
		return s.settle(ctx, o, settleBy, Confirmed, func(ctx context.Context) (Order, error) {
			return s.store.confirm(ctx, o, charge.ID)
		})
	case errors.Is(err, ErrPaymentDeclined):
		s.payrail.Succeeded()
		return s.settleUncharged(ctx, o, settleBy, Declined)
	case errors.Is(err, errNotCharged):
		s.chargeFailed(o, err)
		return s.settleUncharged(ctx, o, settleBy, Failed)
	default:
		s.chargeFailed(o, err)
		s.logger.Debug("checkout: charge outcome unknown; the order stays pending", "order_id", o.ID, "error", err)
		return s.leavePending(ctx, o)
	}
}

// chargeFailed reports a charge that Payrail failed or did not answer in time.
// It is an outage of Payrail, logged as one, only once the breaker holds
// Payrail to be down (failures of many buyers): one failure, or one buyer's
// many, is a line at debug level.
func (s *Service) chargeFailed(o pendingOrder, err error) {
	if s.payments.Unavailable() {
		s.payrail.Down(err)
		return
	}
	s.logger.Debug("checkout: Payrail failed a charge", "order_id", o.ID, "buyer_id", o.BuyerID, "error", err)
}

// payrailAnswered ends an outage of Payrail that recovery or reconciliation
// saw, unless the breaker still holds Payrail to be down for charges.
func (s *Service) payrailAnswered() {
	if !s.payments.Unavailable() {
		s.payrail.Succeeded()
	}
}

// settleUncharged settles an order that has no charge as status.
func (s *Service) settleUncharged(ctx context.Context, o pendingOrder, by time.Time, status string) (Result, error) {
	return s.settle(ctx, o, by, status, func(ctx context.Context) (Order, error) {
		if err := s.store.endUncharged(ctx, o, status); err != nil {
			return Order{}, err
		}
		settled := o.Order
		settled.Status = status
		return settled, nil
	})
}

// settle writes an outcome the checkout learned, retrying with backoff until
// by: the charge is done, so giving up early is not an option. When another
// settled the order first (recovery, after this checkout's lease lapsed), it
// answers with the order as it stands; when the outcome cannot be written in
// time, the order stays pending and recovery settles it.
func (s *Service) settle(ctx context.Context, o pendingOrder, by time.Time, status string, write func(context.Context) (Order, error)) (Result, error) {
	var settled Order
	err := s.retry(ctx, by, func(ctx context.Context) error {
		var err error
		settled, err = write(ctx)
		return err
	})
	switch {
	case err == nil:
		s.metrics.attempts.WithLabelValues(status).Inc()
		return Result{Order: settled}, settled.settledError()
	case errors.Is(err, errNotPending):
		var now Order
		if err := s.retry(ctx, by, func(ctx context.Context) (err error) { now, err = s.Order(ctx, o.BuyerID, o.ID); return err }); err != nil {
			return Result{Order: o.Order}, nil // pending, as far as this request can tell
		}
		return Result{Order: now}, now.settledError()
	}
	s.logger.Warn("checkout: could not write the charge's outcome in time; recovery will",
		"order_id", o.ID, "outcome", status, "error", err)
	return s.leavePending(ctx, o)
}

// leavePending answers with the pending order and gives up the checkout's lease
// on it, so that recovery takes it as soon as it is old enough.
func (s *Service) leavePending(ctx context.Context, o pendingOrder) (Result, error) {
	s.metrics.attempts.WithLabelValues(Pending).Inc()
	if err := s.store.endLease(ctx, o.ID); err != nil {
		s.database.Failed(err) // the lease lapses by itself
	}
	return Result{Order: o.Order}, nil
}

// retry calls write until it succeeds or reports errNotPending, waiting 50 ms
// after the first failure and twice as long after each next (at most 1 s), for
// as long as another try can start before by. Each try must end by then too (a
// write stuck behind a lock is given up).
func (s *Service) retry(ctx context.Context, by time.Time, write func(context.Context) error) error {
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	wait := 50 * time.Millisecond
	for {
		err := write(ctx)
		if err == nil || errors.Is(err, errNotPending) {
			s.database.Succeeded()
			return err
		}
		s.database.Failed(err)
		if time.Now().Add(wait).After(by) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}
