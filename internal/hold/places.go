package hold

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Place is a seat as a ticket names it: its section, row and number. A place
// of general admission has no row (Row is empty): its number only counts the
// section's places.
type Place struct {
	SeatID  string
	Section string
	Row     string
	Number  int
}

// GeneralAdmission reports whether p is a place of general admission.
func (p Place) GeneralAdmission() bool { return p.Row == "" }

// Querier is a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// PlacesOf returns the places of seatIDs in the seat map's order, read through
// q: a pool, or the caller's transaction (internal/checkout names the seats in
// an order's e-mail in the transaction that confirms the order). An id of no
// seat is left out; each id must be a valid id.
func PlacesOf(ctx context.Context, q Querier, seatIDs []string) ([]Place, error) {
	rows, err := q.Query(ctx, `
		SELECT id::text, section, row_label, number FROM seats
		WHERE id = ANY($1::uuid[]) ORDER BY position`, seatIDs)
	if err != nil {
		return nil, fmt.Errorf("hold: places: %w", err)
	}
	places, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Place])
	if err != nil {
		return nil, fmt.Errorf("hold: places: %w", err)
	}
	return places, nil
}
