package httpapi_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// referencePattern is a reference as the API gives it: 10 Crockford base32 characters.
var referencePattern = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{10}$`)

// grouped is a reference as the tickets page shows it, in lower case (as a
// person might type it).
func grouped(ref string) string {
	return strings.ToLower(ref[:4] + "-" + ref[4:8] + " " + ref[8:])
}

// TestReferencesAdmitAtTheDoor: every ticket a buyer lists has its own
// reference; typed at the door (any case, grouped) it admits once, answered
// with the reference and seat; another event's key finds nothing (invalid,
// naming no ticket); the offline list of a bound key holds its event's
// admitting tickets with their references and seats, a page at a time; an
// uploaded typed reference admits as a code does; the audit lists each
// attempt with the reference and seat. Every request and answer is checked
// against the contract.
func TestReferencesAdmitAtTheDoor(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	v.buy(t, 3)
	list := as[ticketList](t, v.inProcess(t, "GET", "/v1/tickets", "", v.buyer.bearer()...)).Tickets
	if len(list) != 3 {
		t.Fatalf("the buyer lists %d tickets, want 3", len(list))
	}
	refs := map[string]bool{}
	for _, tk := range list {
		if !referencePattern.MatchString(tk.Reference) {
			t.Errorf("ticket %s has reference %q", tk.Id.String(), tk.Reference)
		}
		refs[tk.Reference] = true
	}
	if len(refs) != 3 {
		t.Errorf("3 tickets, %d references", len(refs))
	}
	other, _ := newEvent(t, v.testServer, v.org, eventBody(1, 1))
	thisDoor, otherDoor := v.key(t, v.event), v.key(t, other)

	a := v.scanTB(t, otherDoor, list[0].Reference)
	if p := wantRejected(t, "a reference at another event's door", a, 404, "invalid"); p.TicketID != "" {
		t.Errorf("another event's door names the ticket: %s", a.raw)
	}
	a = v.scanTB(t, thisDoor, " "+grouped(list[0].Reference)+" ")
	adm := as[admissionJSON](t, a)
	if a.StatusCode != 200 || adm.TicketID != list[0].Id.String() || adm.Reference != list[0].Reference || adm.Seat.Section != "Floor" {
		t.Fatalf("a typed reference = %d %s, want ticket %s admitted", a.StatusCode, a.raw, list[0].Id.String())
	}
	wantRejected(t, "the reference again", v.scanTB(t, thisDoor, list[0].Reference), 409, "already_scanned")
	wantRejected(t, "its code after its reference", v.scanTB(t, thisDoor, *list[0].Code), 409, "already_scanned")
	wantRejected(t, "a reference of no ticket", v.scanTB(t, thisDoor, "0000-0000-00"), 404, "invalid")

	// The offline list, two pages of one and a last one empty.
	got := map[string]string{}
	after := ""
	for pages := 0; ; pages++ {
		a := v.inProcess(t, "GET", "/v1/scanner/tickets?after="+after, "", "X-Api-Key", thisDoor)
		page := parse(t, a, apiclient.ParseScannerTicketsResponse).JSON200
		if a.StatusCode != 200 || page == nil || pages > 5 {
			t.Fatalf("GET /v1/scanner/tickets = %d %s", a.StatusCode, a.raw)
		}
		if len(page.Tickets) == 0 {
			break
		}
		for _, l := range page.Tickets {
			if l.EventId.String() != v.event || l.Seat.Section != "Floor" || l.Seat.Row != "A" {
				t.Errorf("listed %+v", l)
			}
			got[l.Reference] = l.TicketId.String()
		}
		after = page.NextAfter
	}
	for _, tk := range list {
		if got[tk.Reference] != tk.Id.String() {
			t.Errorf("the offline list %v lacks ticket %s (%s)", got, tk.Id.String(), tk.Reference)
		}
	}
	if a := v.inProcess(t, "GET", "/v1/scanner/tickets", "", "X-Api-Key", otherDoor); a.StatusCode != 200 || strings.Contains(string(a.raw), list[0].Reference) {
		t.Errorf("another event's door lists %d %s", a.StatusCode, a.raw)
	}
	if a := v.inProcess(t, "GET", "/v1/scanner/tickets?after=junk", "", "X-Api-Key", thisDoor); a.StatusCode != 400 {
		t.Errorf("after=junk = %d %s, want 400", a.StatusCode, a.raw)
	}
	if a := v.inProcess(t, "GET", "/v1/scanner/tickets", ""); a.StatusCode != 401 {
		t.Errorf("no key = %d, want 401", a.StatusCode)
	}

	v.keysMadeAgo(t, time.Minute)
	settled := v.upload(t, thisDoor, deviceScan("typed-1", grouped(list[1].Reference), time.Now().Add(-10*time.Second), true))
	if len(settled) != 1 || settled[0].Result != "admitted" || settled[0].TicketID == nil || *settled[0].TicketID != list[1].Id.String() {
		t.Errorf("an uploaded typed reference = %+v, want admitted", settled)
	}

	page := as[apiclient.ScanPage](t, v.request(t, "GET", fmt.Sprintf("/v1/events/%s/scans", v.event), "", v.org.bearer()...))
	byTicket := 0
	for _, s := range page.Scans {
		if s.TicketId == nil {
			if s.Reference != nil || s.Seat != nil {
				t.Errorf("an attempt of no ticket names a reference or seat: %+v", s)
			}
			continue
		}
		byTicket++
		if s.Reference == nil || s.Seat == nil || !refs[*s.Reference] || s.Seat.Section != "Floor" || s.Seat.Row != "A" {
			t.Errorf("audit row %+v, want the ticket's reference and seat", s)
		}
	}
	if byTicket != 4 {
		t.Errorf("the audit lists %d attempts of tickets, want 4", byTicket)
	}
}
