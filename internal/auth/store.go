package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// store is the SQL of accounts and sessions.
type store struct {
	db *pgxpool.Pool
}

func (s store) createAccount(ctx context.Context, a Account, passwordHash []byte) (Account, error) {
	err := s.db.QueryRow(ctx, `
		INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), $1, $2, $3, $4)
		RETURNING id::text`, a.Kind, a.Email, a.Name, string(passwordHash)).Scan(&a.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return Account{}, ErrEmailTaken
	}
	if err != nil {
		return Account{}, fmt.Errorf("auth: create account: %w", err)
	}
	return a, nil
}

// accountByEmail returns the account and its password hash, or pgx.ErrNoRows.
func (s store) accountByEmail(ctx context.Context, email string) (Account, []byte, error) {
	var a Account
	var hash string
	err := s.db.QueryRow(ctx, `
		SELECT id::text, kind, email, name, password_hash FROM accounts WHERE email = $1`, email).
		Scan(&a.ID, &a.Kind, &a.Email, &a.Name, &hash)
	if err != nil {
		return Account{}, nil, err
	}
	return a, []byte(hash), nil
}

// Querier is a pool or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The conditions accountWhere finds an account by.
const (
	whereID    = `id = $1::uuid`
	whereEmail = `email = $1`
)

// accountWhere reads, with q, the account that meets cond (whereID, whereEmail)
// for value, or pgx.ErrNoRows.
func accountWhere(ctx context.Context, q Querier, cond, value string) (Account, error) {
	var a Account
	err := q.QueryRow(ctx, `SELECT id::text, kind, email, name FROM accounts WHERE `+cond, value).
		Scan(&a.ID, &a.Kind, &a.Email, &a.Name)
	return a, err
}

// emails reads the emails of the accounts with these ids.
func (s store) emails(ctx context.Context, accountIDs []string) (map[string]string, error) {
	rows, err := s.db.Query(ctx, `SELECT id::text, email FROM accounts WHERE id = ANY($1::uuid[])`, accountIDs)
	if err != nil {
		return nil, err
	}
	emails := make(map[string]string, len(accountIDs))
	var id, email string
	_, err = pgx.ForEachRow(rows, []any{&id, &email}, func() error {
		emails[id] = email
		return nil
	})
	return emails, err
}

// replacePasswordHash stores fresh as the account's password hash, if old is
// still the one stored.
func (s store) replacePasswordHash(ctx context.Context, accountID string, old, fresh []byte) error {
	_, err := s.db.Exec(ctx, `UPDATE accounts SET password_hash = $3 WHERE id = $1 AND password_hash = $2`,
		accountID, string(old), string(fresh))
	if err != nil {
		return fmt.Errorf("auth: store the password at the current cost: %w", err)
	}
	return nil
}

func (s store) createSession(ctx context.Context, tokenHash []byte, accountID string, expiresAt time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO sessions (token_hash, account_id, expires_at) VALUES ($1, $2, $3)`,
		tokenHash, accountID, expiresAt)
	if err != nil {
		return fmt.Errorf("auth: create session: %w", err)
	}
	return nil
}

// principalBySession returns the principal of a live session.
func (s store) principalBySession(ctx context.Context, tokenHash []byte) (Principal, time.Time, error) {
	var p Principal
	var expires time.Time
	err := s.db.QueryRow(ctx, `
		SELECT a.id::text, a.kind, a.email, s.expires_at
		FROM sessions s JOIN accounts a ON a.id = s.account_id
		WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`, tokenHash).
		Scan(&p.AccountID, &p.Kind, &p.Email, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, time.Time{}, errUnauthenticated
	}
	if err != nil {
		return Principal{}, time.Time{}, fmt.Errorf("auth: look up session: %w", err)
	}
	return p, expires, nil
}

// revokeSession revokes the session and, in the same statement (so on its
// commit), tells every instance to forget it (NOTIFY stagedoor_credentials).
func (s store) revokeSession(ctx context.Context, tokenHash []byte) error {
	_, err := s.db.Exec(ctx, `
		WITH revoked AS (
		    UPDATE sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL RETURNING 1
		)
		SELECT pg_notify($2, 'session:' || encode($1, 'hex'))`, tokenHash, credentialsChannel)
	if err != nil {
		return fmt.Errorf("auth: revoke session: %w", err)
	}
	return nil
}
