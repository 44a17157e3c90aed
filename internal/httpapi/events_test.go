package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// testAccount is an account with an open session, made through the auth
// service (no login limit spent).
type testAccount struct{ id, token, email string }

func (a testAccount) bearer() []string { return []string{"Authorization", "Bearer " + a.token} }

func newAccount(t testing.TB, ts *testServer, kind auth.Kind) testAccount {
	t.Helper()
	ctx := context.Background()
	email := fmt.Sprintf("%s-%s@example.com", kind, ids.New())
	a, err := ts.Auth.Register(ctx, kind, email, "correct horse", "Test "+string(kind))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ts.Auth.Login(ctx, email, "correct horse", "")
	if err != nil {
		t.Fatal(err)
	}
	return testAccount{a.ID, s.Token, email}
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
	a := ts.request(t, "POST", "/v1/events", body, org.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("create event = %d %s", a.StatusCode, a.raw)
	}
	id := as[apiclient.Event](t, a).Id.String()
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

	a := ts.request(t, "POST", "/v1/events", body, org.bearer()...)
	ev := as[apiclient.Event](t, a)
	t.Run("an organizer creates an event", func(t *testing.T) {
		if a.StatusCode != 201 || ev.Name != "Gala" || ev.Currency != "USD" || ev.OrganizerId.String() != org.id ||
			ev.SeatsTotal != 8 || ev.SeatsAvailable != 8 || a.Header.Get("Location") != "/v1/events/"+ev.Id.String() {
			t.Fatalf("POST /v1/events = %d %s", a.StatusCode, a.raw)
		}
		if ev.WaitingRoom == nil || ev.WaitingRoom.AdmitPerSecond != 50 {
			t.Errorf("waiting_room = %+v, want admit_per_second 50", ev.WaitingRoom)
		}
		if time.Since(ev.OnSaleAt) > time.Minute {
			t.Errorf("on_sale_at = %v, want about now when not given", ev.OnSaleAt)
		}
	})
	id := ev.Id.String()

	t.Run("anyone reads it and the list", func(t *testing.T) {
		a := ts.request(t, "GET", "/v1/events/"+id, "")
		if got := as[apiclient.Event](t, a); a.StatusCode != 200 || got.Venue != "Opera" || len(deref(got.Sections)) != 2 || got.WaitingRoom == nil {
			t.Errorf("GET /v1/events/{id} = %d %s", a.StatusCode, a.raw)
		}
		a = ts.request(t, "GET", "/v1/events", "")
		if list := as[apiclient.EventPage](t, a).Events; a.StatusCode != 200 || len(list) != 1 || list[0].SeatsAvailable != 8 {
			t.Errorf("GET /v1/events = %d %s", a.StatusCode, a.raw)
		}
	})

	seats := seatMap(t, ts, id)
	t.Run("the seat map lists every seat by section, row and number", func(t *testing.T) {
		if len(seats) != 8 {
			t.Fatalf("seat map has %d seats, want 8", len(seats))
		}
		want := []string{"Stalls A1", "Stalls A2", "Stalls A3", "Stalls B1", "Stalls B2", "Stalls B3", "Box A1", "Box A2"}
		for i, s := range seats {
			if label := fmt.Sprintf("%s %s%d", s.Section, s.Row, s.Number); label != want[i] || s.Status != "available" {
				t.Errorf("seat %d = %+v, want %s available", i, s, want[i])
			}
		}
		if seats[0].PriceCents != 5000 || seats[7].PriceCents != 0 {
			t.Errorf("prices %d and %d, want 5000 and 0", seats[0].PriceCents, seats[7].PriceCents)
		}
	})

	t.Run("a hold shows on the seat map within a second and in the organizer's counts at once", func(t *testing.T) {
		admitted(t, ts, buyer, id) // the event has a waiting room
		a := ts.request(t, "POST", "/v1/holds", fmt.Sprintf(`{"event_id":%q,"seat_ids":[%q,%q]}`, id, seats[0].Id.String(), seats[6].Id.String()), buyer.bearer()...)
		held := time.Now()
		h := as[holdJSON](t, a)
		if a.StatusCode != 201 || h.TotalCents != 5000 {
			t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
		}
		a = ts.request(t, "GET", "/v1/organizer/events", "", org.bearer()...)
		own := as[organizerEventList](t, a).Events
		if a.StatusCode != 200 || len(own) != 1 {
			t.Fatalf("GET /v1/organizer/events = %d %s", a.StatusCode, a.raw)
		}
		if e := own[0]; e.SeatsHeld != 2 || e.SeatsSold != 0 || e.SeatsAvailable != 6 {
			t.Errorf("organizer's event = %+v, want 2 held, 0 sold, 6 available", e)
		}
		// The promise is about the map's age, not the request's: every map is at
		// most a second old when it is asked for (its as_of), and one made after
		// a change shows it. Only the wait for it is generous, so that a loaded
		// machine's slow requests do not fail the test.
		statusesAfter := func(changed time.Time, want string) func() bool {
			return func() bool {
				asked := time.Now()
				a := ts.request(t, "GET", "/v1/events/"+id+"/seats", "")
				m := as[apiclient.SeatMap](t, a)
				var b strings.Builder
				for _, s := range m.Seats {
					b.WriteString(string(s.Status[:1]))
				}
				if a.StatusCode != 200 || m.AsOf.Before(asked.Add(-time.Second-50*time.Millisecond)) {
					t.Fatalf("seat map asked for at %s = %d, as of %s: more than a second old", asked.Format(time.StampMilli), a.StatusCode, m.AsOf.Format(time.StampMilli))
				}
				if m.AsOf.After(changed) && b.String() != want {
					t.Fatalf("seat map as of %s, after the change at %s, = %s, want %s", m.AsOf.Format(time.StampMilli), changed.Format(time.StampMilli), b.String(), want)
				}
				return b.String() == want
			}
		}
		waitFor(t, 5*time.Second, "the seat map to show the hold", statusesAfter(held, "haaaaaha"))
		if a := ts.request(t, "DELETE", "/v1/holds/"+h.ID, "", buyer.bearer()...); a.StatusCode != 204 {
			t.Fatalf("DELETE hold = %d", a.StatusCode)
		}
		waitFor(t, 5*time.Second, "the seat map to show the release", statusesAfter(time.Now(), "aaaaaaaa"))
	})

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
		if a := ts.request(t, tt.method, tt.path, body, tt.header...); a.StatusCode != tt.status || a.problem(t).Status != tt.status {
			t.Errorf("%s %s = %d %s, want %d problem", tt.method, tt.path, a.StatusCode, a.raw, tt.status)
		}
	}
}

// seatMap reads GET /v1/events/{id}/seats.
func seatMap(t *testing.T, ts *testServer, eventID string) []apiclient.Seat {
	t.Helper()
	a := ts.request(t, "GET", "/v1/events/"+eventID+"/seats", "")
	m := as[apiclient.SeatMap](t, a)
	if a.StatusCode != 200 || m.EventId.String() != eventID {
		t.Fatalf("seat map = %d %s", a.StatusCode, a.raw)
	}
	return m.Seats
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
				if a := ts.request(t, "GET", "/v1/events/"+id+"/seats", ""); a.StatusCode != 200 || len(a.raw) < 500*50 {
					t.Errorf("seat map = %d, %d bytes", a.StatusCode, len(a.raw))
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
	before, start := ts.Events.SeatMapQueries(), time.Now()
	burst(100)
	if q := ts.Events.SeatMapQueries() - before; q != 1 && time.Since(start) < time.Second {
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
			a := ts.request(t, "POST", "/v1/events", tt.body, org.bearer()...)
			if p := a.problem(t); a.StatusCode != 400 || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %d %s, want 400 invalid-request saying %q", a.StatusCode, a.raw, tt.says)
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
	ts.checked.ServeHTTP(rec, req)
	return rec
}
