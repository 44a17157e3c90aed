package scan

import (
	"context"
	"fmt"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// Revocation is a ticket its organizer revoked, as a scanner learns of it.
type Revocation struct {
	ID        int64 // the list's order: ask for those after the last one seen
	TicketID  string
	EventID   string
	RevokedAt time.Time
}

// Revoke makes the organizer's ticket admit no one, online at once and offline
// once devices have synced the revocations. Revoking it again changes nothing;
// another organizer's ticket is errkind.NotFound.
func (s *Service) Revoke(ctx context.Context, organizerID, ticketID string) error {
	id, ok := ids.Parse(ticketID)
	if !ok {
		return errkind.NotFoundf("no such ticket of yours")
	}
	return s.store.revoke(ctx, organizerID, id)
}

// Revocations lists, in order, the revocations after the one numbered after
// that the scanner's key may see: of its event when bound, else of its
// organizer's events; at most limit.
func (s *Service) Revocations(ctx context.Context, sc Scanner, after int64, limit int) ([]Revocation, error) {
	list, err := s.store.revocations(ctx, sc, after, limit)
	if err != nil {
		return nil, fmt.Errorf("scan: revocations: %w", err)
	}
	return list, nil
}

// Listed is a ticket that admits, as a door's offline list has it: so that a
// reference typed while the server is out of reach is checked on the device.
type Listed struct {
	TicketID  string
	EventID   string
	Reference string
	Seat      Seat
}

// Listed lists, by ticket id, the tickets after the id after (empty: from the
// first) that the scanner's key may admit and that admit (neither revoked nor
// refunded nor being refunded: a transferred ticket's successor is listed with
// its own reference), at most limit. A device reads the whole list again now
// and then; between two reads the revocations (Revocations) stop what was
// listed from admitting.
func (s *Service) Listed(ctx context.Context, sc Scanner, after string, limit int) ([]Listed, error) {
	if after != "" {
		id, ok := ids.Parse(after)
		if !ok {
			return nil, errkind.Invalidf("after must be the next_after of an earlier answer")
		}
		after = id
	}
	list, err := s.store.listed(ctx, sc, after, limit)
	if err != nil {
		return nil, fmt.Errorf("scan: the offline list: %w", err)
	}
	return list, nil
}
