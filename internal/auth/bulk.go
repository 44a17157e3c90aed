package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// prepareBatch is how many accounts and sessions one statement of
// PrepareBuyers writes.
const prepareBatch = 1000

// PrepareBuyers makes a buyer account for each email, all with one password,
// and opens a session for each, as many logins would, in a few statements: it
// is for load tests and demos only (the on-sale simulator, internal/onsale),
// never for a request of the API. It computes one bcrypt hash of password for
// all the new accounts, instead of one per account as Register does, inserts
// the accounts and sessions in batches of prepareBatch rows, and skips the
// login limits and device tokens of Login. An email that has an account
// already reuses it, whatever its password (its password is not changed): it
// gets a new session all the same. An email of an organizer's account is an
// errkind.Invalid error, as is a malformed email or password; nothing is then
// written. Each batch is one transaction: when a later batch fails, the
// earlier ones stay (a second call reuses them).
//
// The sessions are returned in the order of emails (a repeated email gets one
// session for each time it is listed).
func (s *Service) PrepareBuyers(ctx context.Context, emails []string, password string) ([]Session, error) {
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	normalized := make([]string, len(emails))
	for i, e := range emails {
		email, err := ParseEmail(e)
		if err != nil {
			return nil, err
		}
		normalized[i] = email
	}
	if err := s.refuseOrganizers(ctx, normalized); err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return nil, err
	}
	sessions := make([]Session, 0, len(emails))
	for start := 0; start < len(normalized); start += prepareBatch {
		batch := normalized[start:min(start+prepareBatch, len(normalized))]
		made, err := s.prepareBatch(ctx, batch, hash)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, made...)
	}
	return sessions, nil
}

// refuseOrganizers is an errkind.Invalid error naming the emails that are
// organizers' accounts, if any.
func (s *Service) refuseOrganizers(ctx context.Context, emails []string) error {
	rows, err := s.store.db.Query(ctx, `SELECT email FROM accounts WHERE email = ANY($1::text[]) AND kind <> 'buyer'`, emails)
	if err != nil {
		return fmt.Errorf("auth: prepare buyers: %w", err)
	}
	organizers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("auth: prepare buyers: %w", err)
	}
	if len(organizers) > 0 {
		return errkind.Invalidf("%s: an organizer's account, not a buyer's", strings.Join(organizers, ", "))
	}
	return nil
}

// prepareBatch makes the accounts of emails that have none and a session for
// each email, in one transaction.
func (s *Service) prepareBatch(ctx context.Context, emails []string, hash []byte) ([]Session, error) {
	tx, err := s.store.db.Begin(ctx)
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
