package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
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

// limitEnv is the environment of a test about what the hold limits decide: a
// Redis deadline long enough that a loaded test machine never makes the
// limiter fail open (the default 50ms is a production choice), plus kv pairs.
func limitEnv(kv ...string) map[string]string {
	env := map[string]string{"STAGEDOOR_REDIS_TIMEOUT": "2s"}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

func TestHoldLifecycle(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, limitEnv(), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	ada, bob := newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(2, 5))

	resp, h := ts.do(t, "POST", "/v1/holds", holdBody(event, strings.ToUpper(seats[3]), seats[1]), ada.bearer()...)
	if resp.StatusCode != 201 || h["status"] != "active" || h["total_cents"] != 9000.0 || h["currency"] != "USD" ||
		h["event_id"] != event || fmt.Sprint(h["seat_ids"]) != fmt.Sprint([]any{seats[3], seats[1]}) {
		t.Fatalf("POST /v1/holds = %d %v", resp.StatusCode, h)
	}
	if got := resp.Header.Get("RateLimit"); got != `"hold-buyer";r=9;t=6` {
		t.Errorf("RateLimit = %q, want hold-buyer's", got)
	}
	expires, err := time.Parse(time.RFC3339, h["expires_at"].(string))
	if ttl := time.Until(expires); err != nil || ttl < 9*time.Minute || ttl > 10*time.Minute {
		t.Errorf("expires_at = %v, want about 10 minutes from now", h["expires_at"])
	}
	id := h["id"].(string)
	path := "/v1/holds/" + id
	if resp.Header.Get("Location") != path {
		t.Errorf("Location = %q", resp.Header.Get("Location"))
	}

	if resp, got := ts.do(t, "GET", path, "", ada.bearer()...); resp.StatusCode != 200 || got["id"] != id || got["status"] != "active" {
		t.Errorf("GET own hold = %d %v", resp.StatusCode, got)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if resp, got := ts.do(t, method, path, "", bob.bearer()...); resp.StatusCode != 404 || got["type"] != "/problems/not-found" {
			t.Errorf("%s another buyer's hold = %d %v, want 404", method, resp.StatusCode, got)
		}
	}
	if resp, got := ts.do(t, "GET", path, "", org.bearer()...); resp.StatusCode != 403 {
		t.Errorf("GET a hold as organizer = %d %v, want 403", resp.StatusCode, got)
	}
	if resp, got := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), org.bearer()...); resp.StatusCode != 403 {
		t.Errorf("POST /v1/holds as organizer = %d %v, want 403", resp.StatusCode, got)
	}

	// Bob asks for a free seat, one of Ada's and another free seat: only Ada's is named.
	resp, refused := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1], seats[2]), bob.bearer()...)
	if resp.StatusCode != 409 || refused["type"] != "/problems/seats-unavailable" ||
		fmt.Sprint(refused["unavailable_seat_ids"]) != fmt.Sprint([]any{seats[1]}) {
		t.Fatalf("Bob on Ada's seat = %d %v, want 409 naming %s", resp.StatusCode, refused, seats[1])
	}
	if n := heldSeats(t, ts, event); n != 2 {
		t.Errorf("%d seats held after the refusal, want Ada's 2 (nothing of Bob's)", n)
	}

	if resp, _ := ts.do(t, "DELETE", path, "", ada.bearer()...); resp.StatusCode != 204 {
		t.Fatalf("DELETE own hold = %d", resp.StatusCode)
	}
	if resp, got := ts.do(t, "GET", path, "", ada.bearer()...); got["status"] != "released" {
		t.Errorf("GET after release = %d %v", resp.StatusCode, got)
	}
	if resp, _ := ts.do(t, "DELETE", path, "", ada.bearer()...); resp.StatusCode != 204 {
		t.Errorf("DELETE again = %d, want 204 (nothing to do)", resp.StatusCode)
	}
	if n := heldSeats(t, ts, event); n != 0 {
		t.Errorf("%d seats held after the release, want 0", n)
	}
	if resp, got := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1], seats[2]), bob.bearer()...); resp.StatusCode != 201 {
		t.Errorf("Bob after the release = %d %v", resp.StatusCode, got)
	}
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
			resp, body := ts.do(t, "POST", "/v1/holds", tt.body, buyer.bearer()...)
			detail, _ := body["detail"].(string)
			if resp.StatusCode != tt.status || body["type"] != "/problems/invalid-request" || !strings.Contains(detail, tt.says) {
				t.Errorf("= %d %v, want %d invalid-request saying %q", resp.StatusCode, body, tt.status, tt.says)
			}
		})
	}
	for _, path := range []string{"/v1/holds/42", "/v1/holds/" + ids.New(), "/v1/holds/%27%3B--"} {
		for _, method := range []string{"GET", "DELETE"} {
			if resp, body := ts.do(t, method, path, "", buyer.bearer()...); resp.StatusCode != 404 || body["type"] != "/problems/not-found" {
				t.Errorf("%s %s = %d %v, want 404", method, path, resp.StatusCode, body)
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
	if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...); resp.StatusCode != 201 ||
		resp.Header.Get("X-RateLimit-Remaining") != "7" {
		t.Errorf("a good hold after bad input = %d %v, remaining %q; want 201 and 7 (only the two writes spent tokens)",
			resp.StatusCode, body, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestHoldBeforeTheSaleOpens(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 2, time.Now().Add(time.Hour)))
	resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...)
	if resp.StatusCode != 409 || body["type"] != "/problems/not-on-sale" || !strings.Contains(body["detail"].(string), "opens at") {
		t.Errorf("hold before on_sale_at = %d %v, want 409 not-on-sale", resp.StatusCode, body)
	}
	if resp.Header.Get("RateLimit") != "" {
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
	for i := range 10 {
		if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); resp.StatusCode != 201 {
			t.Fatalf("hold %d = %d %v", i+1, resp.StatusCode, body)
		}
	}
	resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[10]), buyer.bearer()...)
	ms, _ := body["retry_after_ms"].(float64)
	if resp.StatusCode != 429 || body["limit"] != "hold-buyer" || resp.Header.Get("Retry-After") != "6" || ms < 5000 || ms > 6000 {
		t.Fatalf("11th hold = %d %v Retry-After %q; want 429 hold-buyer, Retry-After: 6, retry_after_ms near 6000",
			resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if n := heldSeats(t, ts, event); n != 10 {
		t.Errorf("%d seats held, want 10: the refused hold must not be written", n)
	}

	fast := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "2/1s"), nil, nil)
	org, buyer = newAccount(t, fast, auth.Organizer), newAccount(t, fast, auth.Buyer)
	event, seats = newEvent(t, fast, org, eventBody(1, 5))
	fast.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...)
	fast.do(t, "POST", "/v1/holds", holdBody(event, seats[1]), buyer.bearer()...)
	resp, body = fast.do(t, "POST", "/v1/holds", holdBody(event, seats[2]), buyer.bearer()...)
	ms, _ = body["retry_after_ms"].(float64)
	if resp.StatusCode != 429 || ms <= 0 || ms > 500 {
		t.Fatalf("3rd hold of 2/1s = %d %v, want 429 with retry_after_ms in (0, 500]", resp.StatusCode, body)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	if resp, body = fast.do(t, "POST", "/v1/holds", holdBody(event, seats[2]), buyer.bearer()...); resp.StatusCode != 201 {
		t.Errorf("after waiting retry_after_ms (%v) = %d %v, want 201", ms, resp.StatusCode, body)
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
		statuses := make([]int, 6)
		limits := make([]any, 6)
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range buyers {
			wg.Go(func() {
				<-begin
				resp, body := ts.do(t, "POST", "/v1/holds", bodies[i], buyers[i].bearer()...)
				statuses[i], limits[i] = resp.StatusCode, body["limit"]
			})
		}
		start := time.Now()
		close(begin)
		wg.Wait()
		elapsed := time.Since(start)

		refused := -1
		placed := 0
		for i, status := range statuses {
			switch {
			case status == 201:
				placed++
			case status == 429 && limits[i] == "hold-organizer":
				refused = i
			default:
				t.Fatalf("buyer %d = %d (limit %v)", i+1, status, limits[i])
			}
		}
		if placed == 6 && elapsed > 150*time.Millisecond && attempt < 3 {
			t.Logf("attempt %d took %s, long enough for a token to refill; trying again", attempt, elapsed)
			continue
		}
		if placed != 5 || refused < 0 {
			t.Fatalf("six buyers at once on one organizer (in %s): %v, want five 201 and one 429 hold-organizer", elapsed, statuses)
		}
		d := ts.Limiter.Allow(context.Background(), ratelimit.Check{Limit: "hold-buyer", Key: buyers[refused].id})
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
	resp, h := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...)
	if resp.StatusCode != 201 {
		t.Fatalf("Ada's hold = %d %v", resp.StatusCode, h)
	}
	expires, _ := time.Parse(time.RFC3339Nano, h["expires_at"].(string))
	if resp, _ := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), bob.bearer()...); resp.StatusCode != 409 {
		t.Fatalf("Bob before the expiry = %d, want 409", resp.StatusCode)
	}
	time.Sleep(time.Until(expires) + 10*time.Millisecond)
	if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), bob.bearer()...); resp.StatusCode != 201 {
		t.Fatalf("Bob just after the expiry = %d %v, want 201", resp.StatusCode, body)
	}
	if resp, got := ts.do(t, "GET", "/v1/holds/"+h["id"].(string), "", ada.bearer()...); got["status"] != "expired" {
		t.Errorf("Ada's hold after its expiry = %d %v, want expired", resp.StatusCode, got)
	}
	waitFor(t, time.Second, "the sweeper to mark Ada's hold expired", func() bool {
		var status string
		err := ts.DB.QueryRow(context.Background(), `SELECT status FROM holds WHERE id = $1`, h["id"]).Scan(&status)
		return err == nil && status == "expired"
	})
	if resp, _ := ts.do(t, "DELETE", "/v1/holds/"+h["id"].(string), "", ada.bearer()...); resp.StatusCode != 204 || heldSeats(t, ts, event) != 1 {
		t.Errorf("Ada releasing her expired hold = %d and freed Bob's seat?", resp.StatusCode)
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
		if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); resp.StatusCode != 201 {
			t.Fatalf("hold %d with Redis down = %d %v", i+1, resp.StatusCode, body)
		}
	}
	for _, limit := range []string{"hold-buyer", "hold-organizer"} {
		series := fmt.Sprintf(`stagedoor_ratelimit_decisions_total{decision="fail_open",limit=%q}`, limit)
		if got := metricValue(t, ts, series); got != "3" {
			t.Errorf("%s = %q, want 3", series, got)
		}
	}
}
