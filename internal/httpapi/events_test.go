package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// testAccount is an account with an open session, made through the auth
// service (no login limit spent).
type testAccount struct{ id, token string }

func (a testAccount) bearer() []string { return []string{"Authorization", "Bearer " + a.token} }

func newAccount(t testing.TB, ts *testServer, kind auth.Kind) testAccount {
	t.Helper()
	ctx := context.Background()
	email := fmt.Sprintf("%s-%s@example.com", kind, ids.New())
	a, err := ts.Auth.Register(ctx, kind, email, "correct horse", "Test "+string(kind))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ts.Auth.Login(ctx, email, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	return testAccount{a.ID, s.Token}
}

// eventBody is an event starting in a month, on sale since a minute ago unless
// onSale says otherwise, with one section "Floor" of rows × perRow seats at 4500
// cents.
func eventBody(rows, perRow int, onSale ...time.Time) string {
	onSaleAt := time.Now().Add(-time.Minute)
	if len(onSale) > 0 {
		onSaleAt = onSale[0]
	}
	return fmt.Sprintf(`{"name":"Test night","venue":"Hall","starts_at":%q,"on_sale_at":%q,
		"sections":[{"name":"Floor","rows":%d,"seats_per_row":%d,"price_cents":4500}]}`,
		time.Now().Add(30*24*time.Hour).UTC().Format(time.RFC3339), onSaleAt.UTC().Format(time.RFC3339), rows, perRow)
}

// newEvent creates an event of the organizer and returns its id and its seat
// ids in seat-map order, read from the database (no snapshot involved).
func newEvent(t testing.TB, ts *testServer, org testAccount, body string) (string, []string) {
	t.Helper()
	resp, out := ts.doTB(t, "POST", "/v1/events", body, org.bearer()...)
	if resp.StatusCode != 201 {
		t.Fatalf("create event = %d %v", resp.StatusCode, out)
	}
	id := out["id"].(string)
	rows, err := ts.DB.Query(context.Background(), `SELECT id::text FROM seats WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seats []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		seats = append(seats, s)
	}
	return id, seats
}

func TestEventsAndSeatMap(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	body := fmt.Sprintf(`{"name":" Gala ","venue":"Opera","starts_at":%q,
		"sections":[{"name":"Stalls","rows":2,"seats_per_row":3,"price_cents":5000},
		            {"name":"Box","rows":1,"seats_per_row":2,"price_cents":0}],
		"waiting_room":{"admit_per_second":50}}`, time.Now().Add(48*time.Hour).Format(time.RFC3339))

	resp, ev := ts.do(t, "POST", "/v1/events", body, org.bearer()...)
	if resp.StatusCode != 201 || ev["name"] != "Gala" || ev["currency"] != "USD" || ev["organizer_id"] != org.id ||
		ev["seats_total"] != 8.0 || ev["seats_available"] != 8.0 ||
		resp.Header.Get("Location") != "/v1/events/"+fmt.Sprint(ev["id"]) {
		t.Fatalf("POST /v1/events = %d %v", resp.StatusCode, ev)
	}
	if wr, _ := ev["waiting_room"].(map[string]any); wr["admit_per_second"] != 50.0 {
		t.Errorf("waiting_room = %v, want admit_per_second 50", ev["waiting_room"])
	}
	onSale, err := time.Parse(time.RFC3339, ev["on_sale_at"].(string))
	if err != nil || time.Since(onSale) > time.Minute {
		t.Errorf("on_sale_at = %v (%v), want about now when not given", ev["on_sale_at"], err)
	}
	id := ev["id"].(string)

	resp, got := ts.do(t, "GET", "/v1/events/"+id, "")
	sections, _ := got["sections"].([]any)
	if resp.StatusCode != 200 || got["venue"] != "Opera" || len(sections) != 2 || got["waiting_room"] == nil {
		t.Errorf("GET /v1/events/{id} = %d %v", resp.StatusCode, got)
	}
	resp, list := ts.do(t, "GET", "/v1/events", "")
	events, _ := list["events"].([]any)
	if resp.StatusCode != 200 || len(events) != 1 || events[0].(map[string]any)["seats_available"] != 8.0 {
		t.Errorf("GET /v1/events = %d %v", resp.StatusCode, list)
	}

	seats := seatMap(t, ts, id)
	if len(seats) != 8 {
		t.Fatalf("seat map has %d seats, want 8", len(seats))
	}
	want := []string{"Stalls A1", "Stalls A2", "Stalls A3", "Stalls B1", "Stalls B2", "Stalls B3", "Box A1", "Box A2"}
	for i, s := range seats {
		if label := fmt.Sprintf("%v %v%v", s["section"], s["row"], s["number"]); label != want[i] || s["status"] != "available" {
			t.Errorf("seat %d = %v, want %s available", i, s, want[i])
		}
	}
	if seats[0]["price_cents"] != 5000.0 || seats[7]["price_cents"] != 0.0 {
		t.Errorf("prices %v and %v, want 5000 and 0", seats[0]["price_cents"], seats[7]["price_cents"])
	}

	// A hold shows on the seat map within a second and in the organizer's counts at once.
	admitted(t, ts, buyer, id) // the event has a waiting room
	resp, h := ts.do(t, "POST", "/v1/holds", fmt.Sprintf(`{"event_id":%q,"seat_ids":[%q,%q]}`, id, seats[0]["id"], seats[6]["id"]), buyer.bearer()...)
	if resp.StatusCode != 201 || h["total_cents"] != 5000.0 {
		t.Fatalf("hold = %d %v", resp.StatusCode, h)
	}
	resp, mine := ts.do(t, "GET", "/v1/organizer/events", "", org.bearer()...)
	own, _ := mine["events"].([]any)
	if resp.StatusCode != 200 || len(own) != 1 {
		t.Fatalf("GET /v1/organizer/events = %d %v", resp.StatusCode, mine)
	}
	if e := own[0].(map[string]any); e["seats_held"] != 2.0 || e["seats_sold"] != 0.0 || e["seats_available"] != 6.0 {
		t.Errorf("organizer's event = %v, want 2 held, 0 sold, 6 available", e)
	}
	statuses := func() string {
		var b strings.Builder
		for _, s := range seatMap(t, ts, id) {
			b.WriteString(s["status"].(string)[:1])
		}
		return b.String()
	}
	waitFor(t, 1100*time.Millisecond, "the seat map to show the hold", func() bool { return statuses() == "haaaaaha" })
	if resp, _ := ts.do(t, "DELETE", "/v1/holds/"+h["id"].(string), "", buyer.bearer()...); resp.StatusCode != 204 {
		t.Fatalf("DELETE hold = %d", resp.StatusCode)
	}
	waitFor(t, 1100*time.Millisecond, "the seat map to show the release", func() bool { return statuses() == "aaaaaaaa" })

	// Rights and unknown ids.
	for _, tt := range []struct {
		method, path string
		header       []string
		status       int
	}{
		{"POST", "/v1/events", buyer.bearer(), 403},
		{"POST", "/v1/events", nil, 401},
		{"GET", "/v1/organizer/events", buyer.bearer(), 403},
		{"GET", "/v1/events/not-an-id", nil, 404},
		{"GET", "/v1/events/" + ids.New(), nil, 404},
		{"GET", "/v1/events/not-an-id/seats", nil, 404},
		{"GET", "/v1/events/" + ids.New() + "/seats", nil, 404},
		{"GET", "/v1/events/'%3B%20DROP%20TABLE%20seats/seats", nil, 404},
	} {
		resp, body := ts.do(t, tt.method, tt.path, body, tt.header...)
		if resp.StatusCode != tt.status || body["type"] == nil {
			t.Errorf("%s %s = %d %v, want %d problem", tt.method, tt.path, resp.StatusCode, body, tt.status)
		}
	}
}

// seatMap reads GET /v1/events/{id}/seats.
func seatMap(t *testing.T, ts *testServer, eventID string) []map[string]any {
	t.Helper()
	resp, raw := ts.raw(t, "GET", "/v1/events/"+eventID+"/seats")
	var out struct {
		EventID string           `json:"event_id"`
		Seats   []map[string]any `json:"seats"`
	}
	if err := json.Unmarshal(raw, &out); resp.StatusCode != 200 || err != nil || out.EventID != eventID {
		t.Fatalf("seat map = %d %s (%v)", resp.StatusCode, raw, err)
	}
	return out.Seats
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestSeatMapStampedeCostsOneQuery: 200 concurrent reads of a seat map cause
// one query; the reads after a second, one more.
func TestSeatMapStampedeCostsOneQuery(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	id, _ := newEvent(t, ts, org, eventBody(10, 50))

	burst := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp, raw := ts.raw(t, "GET", "/v1/events/"+id+"/seats"); resp.StatusCode != 200 || len(raw) < 500*50 {
					t.Errorf("seat map = %d, %d bytes", resp.StatusCode, len(raw))
				}
			}()
		}
		wg.Wait()
	}
	start := time.Now()
	burst(200)
	if q := ts.Events.SeatMapQueries(); q != 1 && time.Since(start) < time.Second {
		t.Errorf("200 concurrent seat-map reads within a second sent %d queries, want 1", q)
	}
	time.Sleep(time.Second)
	before := ts.Events.SeatMapQueries()
	burst(100)
	if q := ts.Events.SeatMapQueries() - before; q != 1 {
		t.Errorf("the next burst, a second later, sent %d queries, want 1", q)
	}
}

func TestCreateEventBadInput(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	later := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	section := `{"name":"Floor","rows":2,"seats_per_row":3,"price_cents":100}`
	ev := func(fields string) string {
		return `{"name":"N","venue":"V","starts_at":"` + future + `","sections":[` + section + `]` + fields + `}`
	}
	withSection := func(s string) string {
		return `{"name":"N","venue":"V","starts_at":"` + future + `","sections":[` + s + `]}`
	}
	tests := []struct{ name, body, says string }{
		{"missing name", `{"venue":"V","starts_at":"` + future + `","sections":[` + section + `]}`, "name is required"},
		{"blank venue", `{"name":"N","venue":"  ","starts_at":"` + future + `","sections":[` + section + `]}`, "venue is required"},
		{"control character", `{"name":"N\u0000","venue":"V","starts_at":"` + future + `","sections":[` + section + `]}`, "control characters"},
		{"missing starts_at", `{"name":"N","venue":"V","sections":[` + section + `]}`, "starts_at is required"},
		{"malformed starts_at", `{"name":"N","venue":"V","starts_at":"tomorrow","sections":[` + section + `]}`, "RFC 3339"},
		{"past starts_at", `{"name":"N","venue":"V","starts_at":"` + past + `","sections":[` + section + `]}`, "in the future"},
		{"on sale after start", ev(`,"on_sale_at":"` + later + `"`), "on_sale_at must not be after starts_at"},
		{"lower-case currency", ev(`,"currency":"usd"`), "ISO 4217"},
		{"short currency", ev(`,"currency":"US"`), "ISO 4217"},
		{"no sections", `{"name":"N","venue":"V","starts_at":"` + future + `","sections":[]}`, "at least one section"},
		{"zero rows", withSection(`{"name":"F","rows":0,"seats_per_row":3,"price_cents":1}`), "sections[0].rows must be between 1 and 100"},
		{"101 rows", withSection(`{"name":"F","rows":101,"seats_per_row":3,"price_cents":1}`), "rows must be between"},
		{"zero seats per row", withSection(`{"name":"F","rows":1,"seats_per_row":0,"price_cents":1}`), "seats_per_row must be between"},
		{"over 10,000 seats", withSection(`{"name":"F","rows":100,"seats_per_row":101,"price_cents":1}`), "at most 10000"},
		{"negative price", withSection(`{"name":"F","rows":1,"seats_per_row":1,"price_cents":-1}`), "price_cents must be between 0"},
		{"missing price", withSection(`{"name":"F","rows":1,"seats_per_row":1}`), "price_cents is required"},
		{"fractional price", withSection(`{"name":"F","rows":1,"seats_per_row":1,"price_cents":1.5}`), "price_cents"},
		{"duplicate section", withSection(section + `,` + section), "used by another section"},
		{"unnamed section", withSection(`{"rows":1,"seats_per_row":1,"price_cents":1}`), "sections[0].name is required"},
		{"waiting room without rate", ev(`,"waiting_room":{}`), "admit_per_second must be between 1"},
		{"unknown field", ev(`,"capacity":10`), `unknown field "capacity"`},
		{"unknown section field", withSection(`{"name":"F","rows":1,"seats_per_row":1,"price_cents":1,"vip":true}`), `unknown field "vip"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.do(t, "POST", "/v1/events", tt.body, org.bearer()...)
			detail, _ := body["detail"].(string)
			if resp.StatusCode != 400 || body["type"] != "/problems/invalid-request" || !strings.Contains(detail, tt.says) {
				t.Errorf("= %d %v, want 400 invalid-request saying %q", resp.StatusCode, body, tt.says)
			}
		})
	}
	var events, seats int
	if err := ts.DB.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM seats)`).Scan(&events, &seats); err != nil || events+seats != 0 {
		t.Errorf("%d events and %d seats stored after bad input (%v), want none", events, seats, err)
	}
}

// serve answers one request in-process, through the whole handler chain.
func (ts *testServer) serve(method, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "192.0.2.1:4000"
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	ts.Handler.ServeHTTP(rec, req)
	return rec
}

// doTB is do for tests and benchmarks alike, served in-process.
func (ts *testServer) doTB(t testing.TB, method, path, body string, header ...string) (*http.Response, map[string]any) {
	t.Helper()
	rec := ts.serve(method, path, body, header...)
	var decoded map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &decoded)
	return rec.Result(), decoded
}

// raw sends a request over HTTP and returns its body undecoded.
func (ts *testServer) raw(t *testing.T, method, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}
