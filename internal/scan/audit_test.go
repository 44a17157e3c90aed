package scan

import (
	"context"
	"errors"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// TestTheAuditPagesNewestFirstForItsOrganizerOnly: every attempt at an event
// is listed, newest first, a page at a time with the cursor handed out; the
// code itself is never kept, only its prefix; another organizer's event reads
// as unknown, and a cursor not handed out is refused.
func TestTheAuditPagesNewestFirstForItsOrganizerOnly(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	sc := d.scanner(t, d.events[0])
	for _, code := range []string{d.codes[0][0], d.codes[0][0], "NOSUCHCODE", d.codes[0][1], d.codes[1][0]} {
		_, _ = d.scans.Scan(ctx, sc, code)
	}
	want := []Result{WrongEvent, Admitted, Invalid, AlreadyScanned, Admitted}
	var got []Attempt
	before := ""
	for range len(want) {
		page, err := d.scans.Attempts(ctx, d.organizer, d.events[0], 2, before)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Attempts...)
		if before = page.NextBefore; before == "" {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the audit lists %d attempts, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		if a.Result != want[i] || a.ScannerKeyID != sc.KeyID || a.ScannerLabel != "Gate" || len(a.CodePrefix) > CodePrefixRunes {
			t.Errorf("attempt %d: %+v, want %s by the Gate key, the code's prefix only", i, a, want[i])
		}
	}
	if _, err := d.scans.Attempts(ctx, d.buyer, d.events[0], 0, ""); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer's audit: %v, want errkind.NotFound", err)
	}
	if _, err := d.scans.Attempts(ctx, d.organizer, d.events[0], 0, "x"); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a cursor not handed out: %v, want errkind.Invalid", err)
	}
	if _, err := d.scans.Attempts(ctx, d.organizer, d.events[0], MaxPageSize+1, ""); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a page over MaxPageSize: %v, want errkind.Invalid", err)
	}
}
