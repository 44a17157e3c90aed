package checkout

import (
	"context"
	"fmt"
)

// OrderSales is how an event's orders stand: how many of each status that
// took money (or may: pending), what they took (GrossCents), what was given
// back of it (RefundedCents), and what was kept (NetCents, the event's
// revenue, as Revenue counts it).
type OrderSales struct {
	Pending, Confirmed, PartiallyRefunded, Refunded int
	GrossCents, RefundedCents, NetCents             int64
}

// Sales reads how the event's orders stand, in one statement.
func (s *Service) Sales(ctx context.Context, eventID string) (OrderSales, error) {
	var o OrderSales
	err := s.store.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status = 'pending'),
		       count(*) FILTER (WHERE status = 'confirmed'),
		       count(*) FILTER (WHERE status = 'partially_refunded'),
		       count(*) FILTER (WHERE status = 'refunded'),
		       coalesce(sum(total_cents) FILTER (WHERE status IN ('confirmed', 'partially_refunded', 'refunded')), 0)::bigint,
		       coalesce(sum(refunded_cents) FILTER (WHERE status IN ('confirmed', 'partially_refunded', 'refunded')), 0)::bigint
		FROM orders WHERE event_id = $1`, eventID).
		Scan(&o.Pending, &o.Confirmed, &o.PartiallyRefunded, &o.Refunded, &o.GrossCents, &o.RefundedCents)
	if err != nil {
		return OrderSales{}, fmt.Errorf("checkout: an event's sales: %w", err)
	}
	o.NetCents = o.GrossCents - o.RefundedCents
	return o, nil
}
