package auth

import (
	"context"
	"fmt"
	"strings"

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
		made, err := s.store.prepareBatch(ctx, batch, hash)
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
	organizers, err := s.store.organizersAmong(ctx, emails)
	if err != nil {
		return fmt.Errorf("auth: prepare buyers: %w", err)
	}
	if len(organizers) > 0 {
		return errkind.Invalidf("%s: an organizer's account, not a buyer's", strings.Join(organizers, ", "))
	}
	return nil
}
