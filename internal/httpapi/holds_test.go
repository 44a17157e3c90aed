package httpapi_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func holdBody(eventID string, seatIDs ...string) string {
	quoted := make([]string, len(seatIDs))
	for i, s := range seatIDs {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf(`{"event_id":%q,"seat_ids":[%s]}`, eventID, strings.Join(quoted, ","))
}

// limitEnv is the environment of kv pairs (startInstance adds what every
// test server has).
func limitEnv(kv ...string) map[string]string { return withEnv(nil, kv...) }

func TestHoldLifecycle(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, limitEnv(), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	ada, bob := newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(2, 5))

	a := ts.request(t, "POST", "/v1/holds", holdBody(event, strings.ToUpper(seats[3]), seats[1]), ada.bearer()...)
	h := as[holdJSON](t, a)
	path := "/v1/holds/" + h.ID
	t.Run("a buyer holds seats, in the order asked, for the hold's TTL", func(t *testing.T) {
		if a.StatusCode != 201 || h.Status != "active" || h.TotalCents != 9000 || h.Currency != "USD" ||
			h.EventID != event || fmt.Sprint(h.SeatIDs) != fmt.Sprint([]string{seats[3], seats[1]}) {
			t.Fatalf("POST /v1/holds = %d %s", a.StatusCode, a.raw)
		}
		if got := a.Header.Get("RateLimit"); got != `"hold-buyer";r=9;t=6` {
			t.Errorf("RateLimit = %q, want hold-buyer's", got)
		}
		if ttl := time.Until(h.ExpiresAt); ttl < 9*time.Minute || ttl > 10*time.Minute {
			t.Errorf("expires_at = %v, want about 10 minutes from now", h.ExpiresAt)
		}
		if a.Header.Get("Location") != path {
			t.Errorf("Location = %q", a.Header.Get("Location"))
		}
	})
	t.Run("only its buyer sees it; organizers hold nothing", func(t *testing.T) {
		if a := ts.request(t, "GET", path, "", ada.bearer()...); a.StatusCode != 200 || as[holdJSON](t, a).ID != h.ID || as[holdJSON](t, a).Status != "active" {
			t.Errorf("GET own hold = %d %s", a.StatusCode, a.raw)
		}
		for _, method := range []string{"GET", "DELETE"} {
			if a := ts.request(t, method, path, "", bob.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
				t.Errorf("%s another buyer's hold = %d %s, want 404", method, a.StatusCode, a.raw)
			}
		}
		if a := ts.request(t, "GET", path, "", org.bearer()...); a.StatusCode != 403 {
			t.Errorf("GET a hold as organizer = %d %s, want 403", a.StatusCode, a.raw)
		}
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), org.bearer()...); a.StatusCode != 403 {
			t.Errorf("POST /v1/holds as organizer = %d %s, want 403", a.StatusCode, a.raw)
		}
	})
	t.Run("a refusal names exactly the seats taken, and holds nothing", func(t *testing.T) {
		// Bob asks for a free seat, one of Ada's and another free seat: only Ada's is named.
		a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1], seats[2]), bob.bearer()...)
		if p := a.problem(t); a.StatusCode != 409 || !p.is("seats-unavailable") || fmt.Sprint(p.UnavailableSeatIDs) != fmt.Sprint([]string{seats[1]}) {
			t.Fatalf("Bob on Ada's seat = %d %s, want 409 naming %s", a.StatusCode, a.raw, seats[1])
		}
		if n := heldSeats(t, ts, event); n != 2 {
			t.Errorf("%d seats held after the refusal, want Ada's 2 (nothing of Bob's)", n)
		}
	})
	t.Run("a released hold frees its seats at once", func(t *testing.T) {
		if a := ts.request(t, "DELETE", path, "", ada.bearer()...); a.StatusCode != 204 {
			t.Fatalf("DELETE own hold = %d", a.StatusCode)
		}
		if a := ts.request(t, "GET", path, "", ada.bearer()...); as[holdJSON](t, a).Status != "released" {
			t.Errorf("GET after release = %d %s", a.StatusCode, a.raw)
		}
		if a := ts.request(t, "DELETE", path, "", ada.bearer()...); a.StatusCode != 204 {
			t.Errorf("DELETE again = %d, want 204 (nothing to do)", a.StatusCode)
		}
		if n := heldSeats(t, ts, event); n != 0 {
			t.Errorf("%d seats held after the release, want 0", n)
		}
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1], seats[2]), bob.bearer()...); a.StatusCode != 201 {
			t.Errorf("Bob after the release = %d %s", a.StatusCode, a.raw)
		}
	})
}

// heldSeats counts the event's seats held now, in the database.
func heldSeats(t *testing.T, ts *testServer, eventID string) int {
	t.Helper()
	var n int
	if err := ts.DB.QueryRow(context.Background(),
		`SELECT count(*) FROM seats WHERE event_id = $1 AND held_until > now()`, eventID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHoldBadInput(t *testing.T) {
	t.Parallel()
	// 10/1h: no token comes back while the test runs, however slow the machine.
	ts := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "10/1h"), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(2, 6))
	other, otherSeats := newEvent(t, ts, org, eventBody(1, 1))
	_ = other

	tests := []struct {
		name, body string
		status     int
		says       string
	}{
		{"unknown event", holdBody(ids.New(), seats[0]), 400, "names no event"},
		{"seat of another event", holdBody(event, seats[0], otherSeats[0]), 400, otherSeats[0] + " are not seats of event"},
		{"unknown seat", holdBody(event, ids.New()), 400, "are not seats of event"},
		{"duplicate seat", holdBody(event, seats[0], seats[1], seats[0]), 400, "more than once"},
		{"duplicate seat in two cases", holdBody(event, seats[0], strings.ToUpper(seats[0])), 400, "more than once"},
		{"no seats", holdBody(event), 400, "1 to 10 seats; it lists 0"},
		{"11 seats", holdBody(event, seats[:11]...), 400, "1 to 10 seats; it lists 11"},
		{"malformed event id", holdBody("42", seats[0]), 400, `event_id "42" is not an event id`},
		{"missing event id", `{"seat_ids":["` + seats[0] + `"]}`, 400, "event_id is required"},
		{"malformed seat id", holdBody(event, seats[0], "A1"), 400, `seat_ids[1] "A1" is not a seat id`},
		{"seat ids not a list", `{"event_id":"` + event + `","seat_ids":"` + seats[0] + `"}`, 400, `"seat_ids" must be an array`},
		{"unknown field", `{"event_id":"` + event + `","seat_ids":["` + seats[0] + `"],"quantity":2}`, 400, `unknown field "quantity"`},
		{"not JSON", `event_id=1`, 400, "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ts.request(t, "POST", "/v1/holds", tt.body, buyer.bearer()...)
			if p := a.problem(t); a.StatusCode != tt.status || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %d %s, want %d invalid-request saying %q", a.StatusCode, a.raw, tt.status, tt.says)
			}
		})
	}
	for _, path := range []string{"/v1/holds/42", "/v1/holds/" + ids.New(), "/v1/holds/%27%3B--"} {
		for _, method := range []string{"GET", "DELETE"} {
			if a := ts.request(t, method, path, "", buyer.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
				t.Errorf("%s %s = %d %s, want 404", method, path, a.StatusCode, a.raw)
			}
		}
	}
	var holds, held int
	if err := ts.DB.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM holds), (SELECT count(*) FROM seats WHERE hold_id IS NOT NULL)`).Scan(&holds, &held); err != nil {
		t.Fatal(err)
	}
	// The seat of the other event and the unknown seat were checked by the write,
	// after the limits; everything else cost the buyer no token.
	if holds+held != 0 {
		t.Errorf("%d holds and %d held seats after bad input, want none", holds, held)
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...); a.StatusCode != 201 ||
		a.Header.Get("X-RateLimit-Remaining") != "7" {
		t.Errorf("a good hold after bad input = %d %s, remaining %q; want 201 and 7 (only the two writes spent tokens)",
			a.StatusCode, a.raw, a.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestHoldBeforeTheSaleOpens(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 2, time.Now().Add(time.Hour)))
	a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...)
	if p := a.problem(t); a.StatusCode != 409 || !p.is("not-on-sale") || !strings.Contains(p.Detail, "opens at") {
		t.Errorf("hold before on_sale_at = %d %s, want 409 not-on-sale", a.StatusCode, a.raw)
	}
	if a.Header.Get("RateLimit") != "" {
		t.Error("a hold refused as not on sale was decided by the limits; it should cost no token")
	}
}

// TestEleventhHoldInABurst: 10/1m lets ten holds through, refuses the 11th
// with Retry-After: 6; with 2/1s, waiting retry_after_ms lets the next through.
func TestEleventhHoldInABurst(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, limitEnv(), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(2, 10))
	// 10/1m earns a token every 6 s from the first hold: the 11th waits 6 s
	// less the time the ten took (seconds on a loaded machine).
	first := time.Now()
	for i := range 10 {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); a.StatusCode != 201 {
			t.Fatalf("hold %d = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[10]), buyer.bearer()...)
	took := time.Since(first).Milliseconds()
	p := a.problem(t)
	wantHeader := fmt.Sprint(math.Ceil(p.RetryAfterMS / 1000))
	if a.StatusCode != 429 || p.Limit != "hold-buyer" || p.RetryAfterMS < float64(6000-took-100) || p.RetryAfterMS > 6000 ||
		a.Header.Get("Retry-After") != wantHeader {
		t.Fatalf("11th hold, %d ms after the first = %d %s Retry-After %q; want 429 hold-buyer, retry_after_ms in [6000-%d, 6000], Retry-After its ceiling in seconds",
			took, a.StatusCode, a.raw, a.Header.Get("Retry-After"), took)
	}
	if n := heldSeats(t, ts, event); n != 10 {
		t.Errorf("%d seats held, want 10: the refused hold must not be written", n)
	}

	fast := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "2/1s"), nil, nil)
	org, buyer = newAccount(t, fast, auth.Organizer), newAccount(t, fast, auth.Buyer)
	event, seats = newEvent(t, fast, org, eventBody(1, 5))
	// Holds until the first refusal: the 3rd, or later when a token (one each
	// 500 ms) accrued while a loaded machine made the first ones.
	refused := 0
	for ; refused < len(seats); refused++ {
		if a = fast.request(t, "POST", "/v1/holds", holdBody(event, seats[refused]), buyer.bearer()...); a.StatusCode != 201 {
			break
		}
	}
	ms := a.problem(t).RetryAfterMS
	if refused < 2 || a.StatusCode != 429 || ms <= 0 || ms > 500 {
		t.Fatalf("hold %d of 2/1s = %d %s, want the 3rd or a later one 429 with retry_after_ms in (0, 500]", refused+1, a.StatusCode, a.raw)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	if a = fast.request(t, "POST", "/v1/holds", holdBody(event, seats[refused]), buyer.bearer()...); a.StatusCode != 201 {
		t.Errorf("after waiting retry_after_ms (%v) = %d %s, want 201", ms, a.StatusCode, a.raw)
	}
}

// TestSixthBuyerOnOneOrganizer: hold-organizer 5/1s across the organizer's two
// events lets five of six buyers holding at once through and refuses the sixth,
// and that refusal spent none of its buyer's tokens. 5/1s refills a token every
// 200 ms, so a run slower than that is inconclusive and is tried again.
func TestSixthBuyerOnOneOrganizer(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_ORGANIZER", "5/1s"), nil, nil)
	for attempt := 1; ; attempt++ {
		org := newAccount(t, ts, auth.Organizer)
		one, seatsOne := newEvent(t, ts, org, eventBody(1, 5))
		two, seatsTwo := newEvent(t, ts, org, eventBody(1, 5))
		buyers := make([]testAccount, 6)
		for i := range buyers {
			buyers[i] = newAccount(t, ts, auth.Buyer)
		}
		bodies := []string{
			holdBody(one, seatsOne[0]), holdBody(two, seatsTwo[0]), holdBody(one, seatsOne[1]),
			holdBody(two, seatsTwo[1]), holdBody(one, seatsOne[2]), holdBody(two, seatsTwo[2]),
		}
		answers := make([]answer, 6)
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range buyers {
			wg.Go(func() {
				<-begin
				answers[i] = ts.request(t, "POST", "/v1/holds", bodies[i], buyers[i].bearer()...)
			})
		}
		start := time.Now()
		close(begin)
		wg.Wait()
		elapsed := time.Since(start)

		refused := -1
		placed := 0
		statuses := make([]int, 6)
		for i, a := range answers {
			statuses[i] = a.StatusCode
			switch {
			case a.StatusCode == 201:
				placed++
			case a.StatusCode == 429 && a.problem(t).Limit == "hold-organizer":
				refused = i
			default:
				t.Fatalf("buyer %d = %d %s", i+1, a.StatusCode, a.raw)
			}
		}
		if placed == 6 && elapsed > 150*time.Millisecond && attempt < 3 {
			t.Logf("attempt %d took %s, long enough for a token to refill; trying again", attempt, elapsed)
			continue
		}
		if placed != 5 || refused < 0 {
			t.Fatalf("six buyers at once on one organizer (in %s): %v, want five 201 and one 429 hold-organizer", elapsed, statuses)
		}
		d := ts.Limiter.Allow(context.Background(), ratelimit.Check{Limit: limits.HoldBuyer, Key: buyers[refused].id})
		if r := d.Results[0]; !d.Allowed || r.Remaining != 9 {
			t.Errorf("the refused buyer's bucket: allowed %v, %d left after one more; want 9 (the refusal spent nothing)", d.Allowed, r.Remaining)
		}
		return
	}
}

// TestExpiredHoldFreesItsSeatsAtOnce: with a 2 s TTL, another buyer holds the
// seat as soon as the first hold expires; the sweeper then marks it expired.
func TestExpiredHoldFreesItsSeatsAtOnce(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_HOLD_TTL": "2s"}, nil, nil)
	ctx, stop := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		ts.Holds.RunSweeper(ctx, 100*time.Millisecond, ts.Logger)
	}()
	t.Cleanup(func() { stop(); <-swept })

	org := newAccount(t, ts, auth.Organizer)
	ada, bob := newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 2))
	a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("Ada's hold = %d %s", a.StatusCode, a.raw)
	}
	h := as[holdJSON](t, a)
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), bob.bearer()...); a.StatusCode != 409 {
		t.Fatalf("Bob before the expiry = %d, want 409", a.StatusCode)
	}
	time.Sleep(time.Until(h.ExpiresAt) + 10*time.Millisecond)
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), bob.bearer()...); a.StatusCode != 201 {
		t.Fatalf("Bob just after the expiry = %d %s, want 201", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", "/v1/holds/"+h.ID, "", ada.bearer()...); as[holdJSON](t, a).Status != "expired" {
		t.Errorf("Ada's hold after its expiry = %d %s, want expired", a.StatusCode, a.raw)
	}
	waitFor(t, 5*time.Second, "the sweeper to mark Ada's hold expired", func() bool {
		var status string
		err := ts.DB.QueryRow(context.Background(), `SELECT status FROM holds WHERE id = $1`, h.ID).Scan(&status)
		return err == nil && status == "expired"
	})
	if a := ts.request(t, "DELETE", "/v1/holds/"+h.ID, "", ada.bearer()...); a.StatusCode != 204 || heldSeats(t, ts, event) != 1 {
		t.Errorf("Ada releasing her expired hold = %d and freed Bob's seat?", a.StatusCode)
	}
}

// TestHoldsFailOpenWhenRedisStops: with Redis gone, holds go on and both limits
// count fail_open.
func TestHoldsFailOpenWhenRedisStops(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	ts := newTestServer(t, nil, nil, redisClient(t, private.URL))
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 3))
	private.Stop()

	for i := range 3 {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); a.StatusCode != 201 {
			t.Fatalf("hold %d with Redis down = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	for _, limit := range []string{"hold-buyer", "hold-organizer"} {
		series := fmt.Sprintf(`stagedoor_ratelimit_decisions_total{decision="fail_open",limit=%q}`, limit)
		if got := metricValue(t, ts, series); got != "3" {
			t.Errorf("%s = %q, want 3", series, got)
		}
	}
}
