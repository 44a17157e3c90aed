package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestAScannerKeyIsBoundOnlyToItsOrganizersEvent: a key may be bound to an
// event of its organizer's; another organizer's event reads as unknown, like
// an event that does not exist, and no key is stored. The key authenticates
// as a scanner of its organizer and event, until it is revoked.
func TestAScannerKeyIsBoundOnlyToItsOrganizersEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestService(t)
	events := event.NewService(s.store.db, hold.CreateSeats)
	s.WithEvents(events)
	mine, err := s.Register(ctx, Organizer, "mine@example.com", "0123456789", "Mine")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.Register(ctx, Organizer, "theirs@example.com", "0123456789", "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	create := func(organizer string) string {
		e, err := events.Create(ctx, event.Draft{OrganizerID: organizer, Name: "N", Venue: "V", StartsAt: time.Now().Add(time.Hour),
			Sections: []event.Section{{Name: "S", Rows: 1, SeatsPerRow: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	myEvent, theirEvent := create(mine.ID), create(theirs.ID)
	for name, eventID := range map[string]string{"another organizer's event": theirEvent, "no event": ids.New(), "not an id": "x"} {
		if _, err := s.CreateScannerKey(ctx, mine.ID, "Gate", eventID); !errors.Is(err, errkind.Invalid) {
			t.Errorf("a key bound to %s: %v, want errkind.Invalid", name, err)
		}
	}
	key, err := s.CreateScannerKey(ctx, mine.ID, "Gate", myEvent)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ScannerKeys(ctx, mine.ID); len(list) != 1 || list[0].EventID != myEvent {
		t.Errorf("the organizer's keys: %+v, want the one bound to its event", list)
	}
	p, err := s.AuthenticateScannerKey(ctx, key.Key)
	if err != nil || p.Kind != Scanner || p.AccountID != mine.ID || p.EventID != myEvent {
		t.Errorf("AuthenticateScannerKey = %+v, %v; want a scanner of the organizer bound to its event", p, err)
	}
	if err := s.RevokeScannerKey(ctx, theirs.ID, key.ID); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer revoking the key: %v, want errkind.NotFound", err)
	}

	unbound := NewService(s.store.db, 4) // no WithEvents: only unbound keys
	if _, err := unbound.CreateScannerKey(ctx, mine.ID, "Gate", myEvent); err == nil {
		t.Error("a bound key made with no events to check its event against")
	}
	if _, err := unbound.CreateScannerKey(ctx, mine.ID, "Gate", ""); err != nil {
		t.Errorf("an unbound key: %v", err)
	}
}
