package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// The SQL of PrepareBuyers (bulk.go has the rules).

// organizersAmong lists those of emails that are organizers' accounts.
func (s store) organizersAmong(ctx context.Context, emails []string) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT email FROM accounts WHERE email = ANY($1::text[]) AND kind <> 'buyer'`, emails)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// prepareBatch makes the accounts of emails that have none and a session for
// each email, in one transaction.
func (s store) prepareBatch(ctx context.Context, emails []string, hash []byte) ([]Session, error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `
		INSERT INTO accounts (id, kind, email, name, password_hash)
		SELECT gen_random_uuid(), 'buyer', e, split_part(e, '@', 1), $2
		FROM unnest($1::text[]) AS e
		ON CONFLICT (email) DO NOTHING`, emails, string(hash)); err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: insert accounts: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT id::text, kind, email FROM accounts WHERE email = ANY($1::text[])`, emails)
	if err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: read accounts: %w", err)
	}
	byEmail := make(map[string]Principal, len(emails))
	var p Principal
	if _, err := pgx.ForEachRow(rows, []any{&p.AccountID, &p.Kind, &p.Email}, func() error {
		byEmail[p.Email] = p
		return nil
	}); err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: read accounts: %w", err)
	}

	expires := time.Now().Add(SessionTTL).UTC().Truncate(time.Second)
	sessions := make([]Session, len(emails))
	copyRows := make([][]any, len(emails))
	var organizers []string
	for i, email := range emails {
		p, ok := byEmail[email]
		if !ok {
			return nil, fmt.Errorf("auth: prepare buyers: the account of %s was not made", email)
		}
		if p.Kind != Buyer {
			organizers = append(organizers, email)
		}
		token, tokenHash := newToken()
		sessions[i] = Session{Token: token, ExpiresAt: expires, Principal: p}
		copyRows[i] = []any{tokenHash, p.AccountID, expires}
	}
	if len(organizers) > 0 { // made meanwhile
		return nil, errkind.Invalidf("%s: an organizer's account, not a buyer's", strings.Join(organizers, ", "))
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"sessions"}, []string{"token_hash", "account_id", "expires_at"},
		pgx.CopyFromRows(copyRows)); err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: insert sessions: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("auth: prepare buyers: %w", err)
	}
	return sessions, nil
}
