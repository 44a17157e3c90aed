package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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
	env := limitEnv(append([]string{"PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100000/1s"}, kv...)...)
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
		resp, h := v.doTB(t, "POST", "/v1/holds", holdBody(v.event, seats...), v.buyer.bearer()...)
		if resp.StatusCode != 201 {
			t.Fatalf("hold = %d %v", resp.StatusCode, h)
		}
		resp, order := v.doTB(t, "POST", "/v1/orders", orderBody(h["id"].(string), "tok_visa"), v.buyer.bearer()...)
		if resp.StatusCode != 201 {
			t.Fatalf("checkout = %d %v", resp.StatusCode, order)
		}
		bySeat := map[string]ticket{}
		for _, tk := range order["tickets"].([]any) {
			m := tk.(map[string]any)
			bySeat[m["seat_id"].(string)] = ticket{id: m["id"].(string), code: m["code"].(string)}
		}
		for _, seat := range seats {
			out = append(out, bySeat[seat])
		}
	}
	return out
}

// scanTB scans code with the scanner key, in-process.
func (ts *testServer) scanTB(t testing.TB, key, code string) (*http.Response, map[string]any) {
	t.Helper()
	return ts.doTB(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key)
}

// wantRejected checks a scan-rejected problem: its status, in the header and
// the body alike, and its result.
func wantRejected(t *testing.T, what string, resp *http.Response, p map[string]any, status int, result string) {
	t.Helper()
	if resp.StatusCode != status || p["status"] != float64(status) || p["type"] != "/problems/scan-rejected" ||
		p["result"] != result || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%s = %d %v, want %d scan-rejected %s", what, resp.StatusCode, p, status, result)
	}
}

func TestScanResults(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 2)
	stranger := newAccount(t, v.testServer, auth.Organizer)
	other, _ := newEvent(t, v.testServer, v.org, eventBody(1, 1))
	_, anyDoor := newScannerKey(t, v.testServer, v.org, "")
	_, thisDoor := newScannerKey(t, v.testServer, v.org, v.event)
	_, otherDoor := newScannerKey(t, v.testServer, v.org, other)
	_, strangersDoor := newScannerKey(t, v.testServer, stranger, "")

	// Another organizer's key: invalid, its existence not revealed, nothing admitted.
	resp, p := v.scanTB(t, strangersDoor, tickets[0].code)
	wantRejected(t, "another organizer's key", resp, p, 404, "invalid")
	if _, leaked := p["ticket_id"]; leaked {
		t.Errorf("an invalid scan names the ticket: %v", p)
	}

	resp, a := v.scanTB(t, anyDoor, "  "+tickets[0].code+"\n")
	seat, _ := a["seat"].(map[string]any)
	first, err := time.Parse(time.RFC3339Nano, fmt.Sprint(a["scanned_at"]))
	if resp.StatusCode != 200 || a["result"] != "admitted" || a["ticket_id"] != tickets[0].id || a["event_id"] != v.event ||
		seat["section"] != "Floor" || seat["row"] != "A" || seat["number"] != 1.0 || err != nil || time.Since(first) > time.Minute {
		t.Fatalf("first scan = %d %v", resp.StatusCode, a)
	}
	resp, p = v.scanTB(t, thisDoor, tickets[0].code)
	wantRejected(t, "the second scan", resp, p, 409, "already_scanned")
	if again, err := time.Parse(time.RFC3339Nano, fmt.Sprint(p["first_scanned_at"])); err != nil || !again.Equal(first) || p["ticket_id"] != tickets[0].id {
		t.Errorf("first_scanned_at = %v, want %v", p["first_scanned_at"], a["scanned_at"])
	}

	// A key of another event of the organizer: wrong_event, and the ticket still admits once.
	resp, p = v.scanTB(t, otherDoor, tickets[1].code)
	wantRejected(t, "a key bound to another event", resp, p, 409, "wrong_event")
	if resp, a := v.scanTB(t, thisDoor, tickets[1].code); resp.StatusCode != 200 || a["result"] != "admitted" {
		t.Errorf("the ticket a wrong_event scan saw, at its own event = %d %v, want admitted", resp.StatusCode, a)
	}
	resp, p = v.scanTB(t, otherDoor, tickets[1].code) // scanned, and still the wrong event
	wantRejected(t, "a scanned ticket at another event", resp, p, 409, "wrong_event")

	resp, p = v.scanTB(t, anyDoor, "NOSUCHCODE")
	wantRejected(t, "an unknown code (unbound key)", resp, p, 404, "invalid")
	resp, p = v.scanTB(t, thisDoor, "NOSUCHCODE2")
	wantRejected(t, "an unknown code (bound key)", resp, p, 404, "invalid")

	for _, body := range []string{``, `{}`, `{"code":""}`, `{"code":"   "}`, `{"code":42}`, `{"code":"A","extra":1}`,
		`{"code":"A\u0000B"}`, fmt.Sprintf(`{"code":%q}`, strings.Repeat("A", 257)), `[]`} {
		if resp, p := v.doTB(t, "POST", "/v1/scans", body, "X-Api-Key", anyDoor); resp.StatusCode != 400 || p["type"] != "/problems/invalid-request" {
			t.Errorf("scan %s = %d %v, want 400", body, resp.StatusCode, p)
		}
	}

	resp, got := v.doTB(t, "GET", "/v1/tickets", "", v.buyer.bearer()...)
	if list, _ := got["tickets"].([]any); resp.StatusCode != 200 || len(list) != 2 ||
		list[0].(map[string]any)["status"] != "scanned" || list[1].(map[string]any)["status"] != "scanned" {
		t.Errorf("the buyer's tickets after the scans = %d %v", resp.StatusCode, got)
	}

	// The audit: this event's attempts newest first; the other event's wrong_event
	// scans under that event; the stranger's and the unbound unknown code under none.
	want := []string{"invalid", "admitted", "already_scanned", "admitted"}
	if got := auditResults(t, v.testServer, v.org, v.event, 3); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the event's audit = %v, want %v", got, want)
	}
	if got := auditResults(t, v.testServer, v.org, other, 0); fmt.Sprint(got) != "[wrong_event wrong_event]" {
		t.Errorf("the other event's audit = %v", got)
	}
	var attempts int
	if err := v.DB.QueryRow(context.Background(), `SELECT count(*) FROM scans`).Scan(&attempts); err != nil || attempts != 8 {
		t.Errorf("%d attempts recorded (%v), want 8: every one that reached the handler with a code", attempts, err)
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
		resp, page := ts.do(t, "GET", path, "", org.bearer()...)
		scans, ok := page["scans"].([]any)
		if resp.StatusCode != 200 || !ok || pages > 100 || (limit > 0 && len(scans) > limit) {
			t.Fatalf("GET %s = %d %v", path, resp.StatusCode, page)
		}
		for _, s := range scans {
			m := s.(map[string]any)
			id, err := strconv.ParseInt(m["id"].(string), 10, 64)
			if err != nil || last != 0 && id >= last {
				t.Errorf("audit not newest first: %v after %d", m["id"], last)
			}
			last = id
			if prefix, _ := m["code_prefix"].(string); len(prefix) > 6 || m["scanner_key_id"] == nil || m["scanner_label"] == nil {
				t.Errorf("audit entry %v", m)
			}
			results = append(results, m["result"].(string))
		}
		next, _ := page["next_before"].(string)
		if next == "" {
			return results
		}
		before = next
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
		if resp, p := ts.do(t, "GET", c.path, "", c.who.bearer()...); resp.StatusCode != c.status {
			t.Errorf("GET %s = %d %v, want %d", c.path, resp.StatusCode, p, c.status)
		}
	}
}
