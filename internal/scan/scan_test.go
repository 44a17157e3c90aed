package scan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

func TestClassify(t *testing.T) {
	at := time.Date(2030, 9, 1, 19, 0, 0, 0, time.UTC)
	unbound := Scanner{KeyID: "k", OrganizerID: "o"}
	bound := Scanner{KeyID: "k", OrganizerID: "o", EventID: "e1"}
	mine := func(event string, scanned *time.Time) ticketState {
		return ticketState{found: true, ticketID: "t", eventID: event, mine: true, scannedAt: scanned}
	}
	for _, c := range []struct {
		name   string
		sc     Scanner
		t      ticketState
		want   Result
		wantOK bool
		sent   error
	}{
		{"unknown code", bound, ticketState{}, Invalid, true, ErrInvalid},
		{"another organizer's ticket", unbound, ticketState{found: true, ticketID: "t", eventID: "e9", scannedAt: &at}, Invalid, true, ErrInvalid},
		{"another event, never scanned", bound, mine("e2", nil), WrongEvent, true, ErrWrongEvent},
		{"another event, scanned there", bound, mine("e2", &at), WrongEvent, true, ErrWrongEvent},
		{"scanned, bound key", bound, mine("e1", &at), AlreadyScanned, true, ErrAlreadyScanned},
		{"scanned, unbound key", unbound, mine("e2", &at), AlreadyScanned, true, ErrAlreadyScanned},
		{"admittable after all", bound, mine("e1", nil), "", false, nil},
	} {
		r, ok := classify(c.sc, c.t)
		if r.Result != c.want || ok != c.wantOK {
			t.Errorf("%s: %q %v, want %q %v", c.name, r.Result, ok, c.want, c.wantOK)
			continue
		}
		if !ok {
			continue
		}
		if !errors.Is(&r, c.sent) {
			t.Errorf("%s: the rejection does not match %v", c.name, c.sent)
		}
		if c.want == Invalid && (r.TicketID != "" || r.EventID != "") {
			t.Errorf("%s: an invalid scan reveals the ticket: %+v", c.name, r)
		}
		if c.want == AlreadyScanned && !r.FirstScannedAt.Equal(at) {
			t.Errorf("%s: first scanned at %v, want %v", c.name, r.FirstScannedAt, at)
		}
	}
}

func TestParseCode(t *testing.T) {
	c, err := parseCode("  ABCDEFGHIJKLMNOP\r\n")
	if err != nil || c.text != "ABCDEFGHIJKLMNOP" || c.prefix != "ABCDEF" || len(c.hash) != 32 {
		t.Errorf("parseCode = %+v, %v", c, err)
	}
	if c, err := parseCode("ÄÖÜ"); err != nil || c.prefix != "ÄÖÜ" {
		t.Errorf("a short code keeps all of it as its prefix: %+v, %v", c, err)
	}
	if c, err := parseCode("ÄÖÜßéèàç"); err != nil || c.prefix != "ÄÖÜßéè" {
		t.Errorf("the prefix is whole characters: %q, %v", c.prefix, err)
	}
	for _, bad := range []string{"", "   ", "A\x00B", "A\tB", strings.Repeat("A", MaxCodeBytes+1)} {
		if _, err := parseCode(bad); !errors.Is(err, errkind.Invalid) {
			t.Errorf("parseCode(%q) = %v, want errkind.Invalid", bad, err)
		}
	}
	if _, err := parseCode(strings.Repeat("A", MaxCodeBytes)); err != nil {
		t.Errorf("a code of %d bytes: %v", MaxCodeBytes, err)
	}
}
