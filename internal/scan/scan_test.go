package scan

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
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

func TestWindowBelievesOnlyWhatCanBeTrue(t *testing.T) {
	now := time.Date(2030, 9, 1, 21, 0, 0, 0, time.UTC)
	from := now.Add(-2 * time.Hour) // the key's making, or its last upload
	live := window{now: now, from: from, until: now}
	revokedAt := now.Add(-time.Hour)
	revoked := window{now: now, from: from, until: revokedAt, revoked: true}
	for _, c := range []struct {
		name   string
		w      window
		at     time.Time
		want   time.Time
		wantOK bool
	}{
		{"within", live, now.Add(-time.Minute), now.Add(-time.Minute), true},
		{"at the window's start", live, from, from, true},
		{"before it: taken as now", live, from.Add(-time.Nanosecond), now, true},
		{"1970: taken as now", live, time.Unix(0, 0), now, true},
		{"no date at all: taken as now", live, time.Time{}, now, true},
		{"in the future: taken as now", live, now.Add(time.Second), now, true},
		{"revoked key, before its revocation", revoked, revokedAt.Add(-time.Minute), revokedAt.Add(-time.Minute), true},
		{"revoked key, at its revocation", revoked, revokedAt, revokedAt, true},
		{"revoked key, after its revocation: refused", revoked, revokedAt.Add(time.Second), time.Time{}, false},
		{"revoked key, before the window: refused", revoked, time.Unix(0, 0), time.Time{}, false},
	} {
		got, ok := c.w.believe(c.at)
		if ok != c.wantOK || ok && !got.Equal(c.want) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

func TestParseCodeReadsSignedCodes(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	ticket, event := ids.New(), ids.New()
	signed, err := ticketsign.Sign(priv, ticket, event)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCode(signed)
	if err != nil || !c.signed || !c.wellFormed() || c.claims.TicketID != ticket || c.claims.EventID != event {
		t.Errorf("a signed code: %+v, %v", c, err)
	}
	for _, r := range ticketsign.Respellings(signed) {
		c, err := parseCode(r)
		if err != nil || !c.signed || c.wellFormed() || !c.respelled || c.canonical != signed || c.claims.TicketID != ticket {
			t.Fatalf("a respelling: %+v, %v; want signed, respelled, standing for the code", c, err)
		}
	}
	for _, bad := range []string{"SD1", signed[:100], signed + "A", "SD1" + strings.Repeat("A", 156)} {
		if c, err := parseCode(bad); err != nil || !c.signed || c.wellFormed() || c.canonical != "" || c.claims.EventID != "" {
			t.Errorf("parseCode(%.20q…) = %+v, %v; want signed, malformed, claiming nothing", bad, c, err)
		}
	}
	if c, _ := parseCode("Y4J6FN35FCCKJ3RP5RTCPIXGMUYCRI2U"); c.signed {
		t.Error("an older code reads as signed")
	}
}
