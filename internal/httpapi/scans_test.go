package httpapi_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// venue is a server with a Payrail stub, an organizer with an on-sale event of
// 100 seats, and a buyer who buys tickets for it through the API.
type venue struct {
	*testServer
	org, buyer testAccount
	event      string
	seats      []string
	sold       int // seats bought so far
}

type ticket struct{ id, code string }

// newVenue starts the server on db (nil: the test's own database), with the
// limit test environment (a 2 s Redis deadline) plus kv pairs.
func newVenue(t testing.TB, db *pgxpool.Pool, kv ...string) *venue {
	t.Helper()
	p := startPayrailTB(t, 0)
	env := limitEnv(append([]string{"PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100000/1s",
		"STAGEDOOR_LIMIT_CHECKOUT_BUYER", "100000/1s"}, kv...)...)
	ts := startInstance(t, instance{env: env, db: db})
	v := &venue{testServer: ts, org: newAccount(t, ts, auth.Organizer), buyer: newAccount(t, ts, auth.Buyer)}
	v.event, v.seats = newEvent(t, ts, v.org, eventBody(10, 10))
	return v
}

// buy buys the next n seats, 10 an order, and returns their tickets in seat order.
func (v *venue) buy(t testing.TB, n int) []ticket {
	t.Helper()
	var out []ticket
	for n > 0 {
		batch := min(n, 10)
		seats := v.seats[v.sold : v.sold+batch]
		v.sold, n = v.sold+batch, n-batch
		a := v.inProcess(t, "POST", "/v1/holds", holdBody(v.event, seats...), v.buyer.bearer()...)
		if a.StatusCode != 201 {
			t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
		}
		a = v.inProcess(t, "POST", "/v1/orders", orderBody(as[holdJSON](t, a).ID, "tok_visa"), v.buyer.bearer()...)
		if a.StatusCode != 201 {
			t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
		}
		bySeat := map[string]ticket{}
		for _, tk := range as[apiclient.Order](t, a).Tickets {
			bySeat[tk.SeatId.String()] = ticket{id: tk.Id.String(), code: *tk.Code}
		}
		for _, seat := range seats {
			out = append(out, bySeat[seat])
		}
	}
	return out
}

// scanTB scans code with the scanner key, in-process.
func (ts *testServer) scanTB(t testing.TB, key, code string) answer {
	t.Helper()
	return ts.inProcess(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key)
}

// wantRejected checks a scan-rejected problem: its status, in the header and
// the body alike, and its result; and returns it.
func wantRejected(t *testing.T, what string, a answer, status int, result string) problem {
	t.Helper()
	p := a.problem(t)
	if a.StatusCode != status || p.Status != status || !p.is("scan-rejected") || p.Result != result {
		t.Errorf("%s = %d %s, want %d scan-rejected %s", what, a.StatusCode, a.raw, status, result)
	}
	return p
}

func TestScanResults(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 2)
	stranger := newAccount(t, v.testServer, auth.Organizer)
	other, _ := newEvent(t, v.testServer, v.org, eventBody(1, 1))
	anyDoor, thisDoor := v.key(t, ""), v.key(t, v.event)
	_, otherDoor := newScannerKey(t, v.testServer, v.org, other)
	_, strangersDoor := newScannerKey(t, v.testServer, stranger, "")

	t.Run("another organizer's key: invalid, the ticket not revealed", func(t *testing.T) {
		a := v.scanTB(t, strangersDoor, tickets[0].code)
		if p := wantRejected(t, "another organizer's key", a, 404, "invalid"); p.TicketID != "" {
			t.Errorf("an invalid scan names the ticket: %s", a.raw)
		}
	})
	var first time.Time
	t.Run("the first scan admits, with the seat", func(t *testing.T) {
		a := v.scanTB(t, anyDoor, "  "+tickets[0].code+"\n")
		adm := as[admissionJSON](t, a)
		if a.StatusCode != 200 || adm.Result != "admitted" || adm.TicketID != tickets[0].id || adm.EventID != v.event ||
			adm.Seat.Section != "Floor" || adm.Seat.Row != "A" || adm.Seat.Number != 1 || time.Since(adm.ScannedAt) > time.Minute {
			t.Fatalf("first scan = %d %s", a.StatusCode, a.raw)
		}
		first = adm.ScannedAt
	})
	t.Run("the second scan says when the first was", func(t *testing.T) {
		p := wantRejected(t, "the second scan", v.scanTB(t, thisDoor, tickets[0].code), 409, "already_scanned")
		if !p.FirstScannedAt.Equal(first) || p.TicketID != tickets[0].id {
			t.Errorf("first_scanned_at = %v, want %v", p.FirstScannedAt, first)
		}
	})
	t.Run("a key of another event: wrong_event, and the ticket still admits once", func(t *testing.T) {
		wantRejected(t, "a key bound to another event", v.scanTB(t, otherDoor, tickets[1].code), 409, "wrong_event")
		if a := v.scanTB(t, thisDoor, tickets[1].code); a.StatusCode != 200 || as[admissionJSON](t, a).Result != "admitted" {
			t.Errorf("the ticket a wrong_event scan saw, at its own event = %d %s, want admitted", a.StatusCode, a.raw)
		}
		wantRejected(t, "a scanned ticket at another event", v.scanTB(t, otherDoor, tickets[1].code), 409, "wrong_event")
	})
	t.Run("unknown codes are invalid", func(t *testing.T) {
		wantRejected(t, "an unknown code (unbound key)", v.scanTB(t, anyDoor, "NOSUCHCODE"), 404, "invalid")
		wantRejected(t, "an unknown code (bound key)", v.scanTB(t, thisDoor, "NOSUCHCODE2"), 404, "invalid")
	})
	t.Run("a bad body is 400", func(t *testing.T) {
		for _, body := range []string{``, `{}`, `{"code":""}`, `{"code":"   "}`, `{"code":42}`, `{"code":"A","extra":1}`,
			`{"code":"A\u0000B"}`, fmt.Sprintf(`{"code":%q}`, strings.Repeat("A", 257)), `[]`} {
			if a := v.inProcess(t, "POST", "/v1/scans", body, "X-Api-Key", anyDoor); a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
				t.Errorf("scan %s = %d %s, want 400", body, a.StatusCode, a.raw)
			}
		}
	})
	t.Run("the buyer sees the tickets scanned", func(t *testing.T) {
		a := v.inProcess(t, "GET", "/v1/tickets", "", v.buyer.bearer()...)
		if list := as[ticketList](t, a).Tickets; a.StatusCode != 200 || len(list) != 2 || list[0].Status != "scanned" || list[1].Status != "scanned" {
			t.Errorf("the buyer's tickets after the scans = %d %s", a.StatusCode, a.raw)
		}
	})

	// The audit: this event's attempts newest first; the other event's wrong_event
	// scans under that event; the stranger's and the unbound unknown code belong
	// to no event of the key's organizer, so they are not stored.
	want := []string{"invalid", "admitted", "already_scanned", "admitted"}
	if got := auditResults(t, v.testServer, v.org, v.event, 3); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the event's audit = %v, want %v", got, want)
	}
	if got := auditResults(t, v.testServer, v.org, other, 0); fmt.Sprint(got) != "[wrong_event wrong_event]" {
		t.Errorf("the other event's audit = %v", got)
	}
	var attempts int
	if err := v.DB.QueryRow(context.Background(), `SELECT count(*) FROM scans`).Scan(&attempts); err != nil || attempts != 6 {
		t.Errorf("%d attempts recorded (%v), want 6: every one that reached the handler with a code, of an event of the key's organizer", attempts, err)
	}
}

// auditResults pages through the event's audit, limit at a time (0: the
// default), checks each page, and returns the results newest first.
func auditResults(t *testing.T, ts *testServer, org testAccount, eventID string, limit int) []string {
	t.Helper()
	var results []string
	before, last := "", int64(0)
	for pages := 0; ; pages++ {
		path := fmt.Sprintf("/v1/events/%s/scans?before=%s", eventID, before)
		if limit > 0 {
			path += fmt.Sprintf("&limit=%d", limit)
		}
		a := ts.request(t, "GET", path, "", org.bearer()...)
		page := as[apiclient.ScanPage](t, a)
		if a.StatusCode != 200 || page.Scans == nil || pages > 100 || (limit > 0 && len(page.Scans) > limit) {
			t.Fatalf("GET %s = %d %s", path, a.StatusCode, a.raw)
		}
		for _, s := range page.Scans {
			id, err := strconv.ParseInt(s.Id, 10, 64)
			if err != nil || last != 0 && id >= last {
				t.Errorf("audit not newest first: %s after %d", s.Id, last)
			}
			last = id
			if len(s.CodePrefix) > 6 || s.ScannerKeyId == uuid.Nil || s.ScannerLabel == "" {
				t.Errorf("audit entry %+v", s)
			}
			results = append(results, string(s.Result))
		}
		if page.NextBefore == nil {
			return results
		}
		before = *page.NextBefore
	}
}

func TestScanAuditAccess(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, _ := newEvent(t, ts, org, eventBody(1, 1))
	base := "/v1/events/" + event + "/scans"
	for _, c := range []struct {
		path   string
		who    testAccount
		status int
	}{
		{base, org, 200},
		{"/v1/events/" + strings.ToUpper(event) + "/scans", org, 200},
		{base, other, 404},
		{"/v1/events/" + ids.New() + "/scans", org, 404},
		{"/v1/events/nope/scans", org, 404},
		{base, buyer, 403},
		{base + "?limit=0", org, 400},
		{base + "?limit=501", org, 400},
		{base + "?limit=x", org, 400},
		{base + "?before=x", org, 400},
		{base + "?before=0", org, 400},
		{base + "?limit=500&before=12", org, 200},
	} {
		if a := ts.request(t, "GET", c.path, "", c.who.bearer()...); a.StatusCode != c.status {
			t.Errorf("GET %s = %d %s, want %d", c.path, a.StatusCode, a.raw, c.status)
		}
	}
}
