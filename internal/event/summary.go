package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Summary is what a message about an event says of it.
type Summary struct {
	ID       string
	Name     string
	Venue    string
	StartsAt time.Time
	Currency string
}

// Querier is a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SummaryOf returns the event's name, venue, start and currency, read through
// q: a pool, or the caller's transaction (internal/checkout writes an order's
// e-mail in the transaction that confirms it). It returns an
// errkind.NotFound error when there is no such event; id must be a valid id.
func SummaryOf(ctx context.Context, q Querier, id string) (Summary, error) {
	s := Summary{ID: id}
	err := q.QueryRow(ctx, `SELECT name, venue, starts_at, currency FROM events WHERE id = $1`, id).
		Scan(&s.Name, &s.Venue, &s.StartsAt, &s.Currency)
	if errors.Is(err, pgx.ErrNoRows) {
		return Summary{}, errNotFound
	}
	if err != nil {
		return Summary{}, fmt.Errorf("event: summary: %w", err)
	}
	s.StartsAt = s.StartsAt.UTC()
	return s, nil
}
