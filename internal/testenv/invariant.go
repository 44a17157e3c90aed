package testenv

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/docs"
)

// MoneyViolations runs the money invariant (docs/invariant.sql) on db, whose
// schema payrail holds the Payrail ledger, and returns its rows as
// "violation: subject". None is the truth.
func MoneyViolations(t testing.TB, db *pgxpool.Pool) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), docs.InvariantSQL)
	if err != nil {
		t.Fatalf("testenv: money invariant: %v", err)
	}
	violations, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var what, subject string
		err := row.Scan(&what, &subject)
		return what + ": " + subject, err
	})
	if err != nil {
		t.Fatalf("testenv: money invariant: %v", err)
	}
	return violations
}
