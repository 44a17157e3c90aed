package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// Querier is a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// AccountOf returns the account with this id, read through q: a pool, or the
// caller's transaction (internal/checkout reads the buyer's address and name
// for the order's e-mail in the transaction that confirms the order). It
// returns an errkind.NotFound error when there is none; id must be a valid id.
func AccountOf(ctx context.Context, q Querier, id string) (Account, error) {
	a := Account{ID: id}
	err := q.QueryRow(ctx, `SELECT kind, email, name FROM accounts WHERE id = $1`, id).Scan(&a.Kind, &a.Email, &a.Name)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errkind.NotFoundf("no such account")
	}
	if err != nil {
		return Account{}, fmt.Errorf("auth: read account: %w", err)
	}
	return a, nil
}
