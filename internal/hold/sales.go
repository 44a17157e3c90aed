package hold

import (
	"context"
	"fmt"
)

// SectionSales is how a section's seats (or places) stand now: how many are
// sold, how many held (by a hold not yet expired), and what the sold ones
// cost at their price.
type SectionSales struct {
	Sold, Held int
	SoldCents  int64
}

// SalesBySection reads, in one grouped statement, how each section of the
// event stands, by section name; a section with nothing sold or held may be
// missing. A seat back on sale after a refund (Resell) counts as available.
func (s *Service) SalesBySection(ctx context.Context, eventID string) (map[string]SectionSales, error) {
	rows, err := s.store.db.Query(ctx, `
		SELECT section,
		       count(*) FILTER (WHERE sold_at IS NOT NULL),
		       count(*) FILTER (WHERE sold_at IS NULL AND held_until > now()),
		       coalesce(sum(price_cents) FILTER (WHERE sold_at IS NOT NULL), 0)::bigint
		FROM seats WHERE event_id = $1
		GROUP BY section`, eventID)
	if err != nil {
		return nil, fmt.Errorf("hold: an event's sales by section: %w", err)
	}
	defer rows.Close()
	out := map[string]SectionSales{}
	for rows.Next() {
		var name string
		var v SectionSales
		if err := rows.Scan(&name, &v.Sold, &v.Held, &v.SoldCents); err != nil {
			return nil, fmt.Errorf("hold: an event's sales by section: %w", err)
		}
		out[name] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hold: an event's sales by section: %w", err)
	}
	return out, nil
}
