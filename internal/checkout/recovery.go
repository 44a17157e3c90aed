package checkout

import (
	"context"
	"fmt"
	"time"
)

// recoveryLock is the advisory lock that lets one instance at a time recover.
const recoveryLock = 0x5eed_0006

// Recover settles the orders left pending longer than the service's
// recoverAfter (a process died between charge and confirmation, or Payrail's
// answer was lost): confirmed when Payrail has a successful charge for the
// order, its hold released when it has none. An order Payrail cannot be asked
// about now is left for the next run. Only one instance recovers at a time;
// the others return at once. It returns how many orders it settled.
func (s *Service) Recover(ctx context.Context) (int, error) {
	conn, err := s.store.db.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("checkout: recover: %w", err)
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, recoveryLock).Scan(&locked); err != nil {
		return 0, fmt.Errorf("checkout: recover: %w", err)
	}
	if !locked {
		return 0, nil
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, recoveryLock)

	stale, err := s.store.stalePending(ctx, s.recoverAfter.Seconds(), 100)
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, o := range stale {
		charge, charged, err := s.payments.Find(ctx, o.ID)
		if err != nil {
			s.logger.Warn("recovery: cannot ask Payrail; will retry", "order_id", o.ID, "error", err)
			continue
		}
		if charged {
			ok, err := s.store.confirm(ctx, o, charge.ID)
			if err != nil {
				return settled, err
			}
			if ok {
				settled++
				s.logger.Info("recovery: pending order confirmed", "order_id", o.ID, "charge_id", charge.ID)
			}
			continue
		}
		if err := s.store.release(ctx, o); err != nil {
			return settled, err
		}
		settled++
		s.logger.Info("recovery: pending order had no charge; hold released", "order_id", o.ID, "hold_id", o.HoldID)
	}
	return settled, nil
}

// RunRecovery runs Recover now and then every interval until ctx ends.
func (s *Service) RunRecovery(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Recover(ctx); err != nil && ctx.Err() == nil {
			s.logger.Error("recovery failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
