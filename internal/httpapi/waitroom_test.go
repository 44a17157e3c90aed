package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// roomEventBody is eventBody with a waiting room admitting rate a second.
func roomEventBody(rows, perRow, rate int, onSale time.Time) string {
	body := strings.TrimSuffix(strings.TrimSpace(eventBody(rows, perRow, onSale)), "}")
	return body + fmt.Sprintf(`,"waiting_room":{"admit_per_second":%d}}`, rate)
}

func queuePath(eventID string) string { return "/v1/events/" + eventID + "/queue" }

// admitted has the buyer join the event's queue and waits until she is
// admitted; it returns the end of her admission.
func admitted(t *testing.T, ts *testServer, buyer testAccount, eventID string) time.Time {
	t.Helper()
	if resp, body := ts.do(t, "POST", queuePath(eventID), "", buyer.bearer()...); resp.StatusCode != 200 {
		t.Fatalf("joining the queue = %d %v", resp.StatusCode, body)
	}
	var until time.Time
	waitFor(t, 5*time.Second, "the buyer's admission", func() bool {
		_, body := ts.do(t, "GET", queuePath(eventID), "", buyer.bearer()...)
		until, _ = time.Parse(time.RFC3339Nano, fmt.Sprint(body["admitted_until"]))
		return body["status"] == "admitted"
	})
	return until
}

// TestAdmissionGatesHolds: without an admission a buyer cannot hold (and
// spends no hold token); with it she can; after it lapses she cannot, until
// she joins again. Every key the room wrote has a time to live.
func TestAdmissionGatesHolds(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	ts := startInstance(t, instance{env: limitEnv(), rdb: rdb, redisPrefix: prefix, admission: 2 * time.Second})
	org, ada := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, roomEventBody(1, 4, 1000, time.Now().Add(-time.Minute)))

	resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...)
	if resp.StatusCode != 403 || body["type"] != "/problems/not-admitted" || !strings.Contains(fmt.Sprint(body["detail"]), "not joined") {
		t.Fatalf("hold before joining = %d %v, want 403 not-admitted", resp.StatusCode, body)
	}
	if resp.Header.Get("RateLimit") != "" {
		t.Error("a hold refused for want of admission was decided by the hold limits; it should spend no token")
	}
	if resp, body := ts.do(t, "GET", queuePath(event), "", ada.bearer()...); resp.StatusCode != 404 || body["type"] != "/problems/not-found" {
		t.Errorf("GET queue before joining = %d %v, want 404", resp.StatusCode, body)
	}

	resp, body = ts.do(t, "POST", queuePath(event), "", ada.bearer()...)
	until, err := time.Parse(time.RFC3339Nano, fmt.Sprint(body["admitted_until"]))
	if resp.StatusCode != 200 || body["status"] != "admitted" || err != nil || time.Until(until) > 2*time.Second ||
		body["position"] != nil || resp.Header.Get("RateLimit") != `"queue-join";r=4;t=12` {
		t.Fatalf("joining a quiet room = %d %v (RateLimit %q); want admitted at once, for 2 s",
			resp.StatusCode, body, resp.Header.Get("RateLimit"))
	}
	if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...); resp.StatusCode != 201 {
		t.Fatalf("hold while admitted = %d %v", resp.StatusCode, body)
	}

	time.Sleep(time.Until(until) + 50*time.Millisecond)
	resp, body = ts.do(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...)
	if resp.StatusCode != 403 || body["type"] != "/problems/not-admitted" || !strings.Contains(fmt.Sprint(body["detail"]), "lapsed") {
		t.Fatalf("hold after the admission lapsed = %d %v, want 403 not-admitted", resp.StatusCode, body)
	}
	if resp, body := ts.do(t, "GET", queuePath(event), "", ada.bearer()...); resp.StatusCode != 404 ||
		!strings.Contains(fmt.Sprint(body["detail"]), "lapsed") {
		t.Errorf("GET queue after the admission lapsed = %d %v, want 404 saying so", resp.StatusCode, body)
	}
	if again := admitted(t, ts, ada, event); !again.After(until) {
		t.Errorf("joining again gave an admission until %s, want after %s", again, until)
	}
	if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...); resp.StatusCode != 201 {
		t.Errorf("hold after joining again = %d %v", resp.StatusCode, body)
	}

	keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under %s: %v, %v", prefix, keys, err)
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(context.Background(), k).Val(); ttl <= 0 {
			t.Errorf("key %s has no time to live (%s)", k, ttl)
		}
	}
}

// TestQueueJoinLimitAndPlace: joining again keeps one's place (on every
// instance); the 6th join in a minute is 429 queue-join; polling is not
// limited; only buyers join; events without a room say so, spending nothing.
func TestQueueJoinLimitAndPlace(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	db := testenv.Postgres(t)
	one := startInstance(t, instance{env: limitEnv(), db: db, rdb: rdb, redisPrefix: prefix})
	two := startInstance(t, instance{env: limitEnv(), db: db, rdb: rdb, redisPrefix: prefix})
	org := newAccount(t, one, auth.Organizer)
	buyers := []testAccount{newAccount(t, one, auth.Buyer), newAccount(t, one, auth.Buyer), newAccount(t, one, auth.Buyer)}
	event, _ := newEvent(t, one, org, roomEventBody(1, 2, 1, time.Now().Add(time.Hour)))

	for i, b := range buyers {
		if resp, body := one.do(t, "POST", queuePath(event), "", b.bearer()...); resp.StatusCode != 200 ||
			body["status"] != "waiting" || body["position"] == nil || body["estimated_wait_seconds"].(float64) < 3600 {
			t.Fatalf("buyer %d joining = %d %v, want waiting until after the sale opens", i, resp.StatusCode, body)
		}
	}
	cy := buyers[2]
	_, first := one.do(t, "GET", queuePath(event), "", cy.bearer()...)
	for i := 2; i <= 5; i++ {
		resp, body := one.do(t, "POST", queuePath(event), "", cy.bearer()...)
		if resp.StatusCode != 200 || body["position"] != first["position"] ||
			body["estimated_wait_seconds"].(float64) > first["estimated_wait_seconds"].(float64) {
			t.Fatalf("join %d = %d %v; want her place kept: %v", i, resp.StatusCode, body, first)
		}
	}
	resp, body := one.do(t, "POST", queuePath(event), "", cy.bearer()...)
	if resp.StatusCode != 429 || body["limit"] != "queue-join" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("6th join in a minute = %d %v, want 429 queue-join with Retry-After", resp.StatusCode, body)
	}
	for name, ts := range map[string]*testServer{"this": one, "another": two} {
		if resp, body := ts.do(t, "GET", queuePath(event), "", cy.bearer()...); resp.StatusCode != 200 ||
			body["status"] != "waiting" || body["position"] != first["position"] {
			t.Errorf("GET on %s instance = %d %v, want %v", name, resp.StatusCode, body, first)
		}
	}
	if resp, body := one.do(t, "POST", queuePath(event), "", org.bearer()...); resp.StatusCode != 403 {
		t.Errorf("an organizer joining = %d %v, want 403", resp.StatusCode, body)
	}

	plain, _ := newEvent(t, one, org, eventBody(1, 1))
	for _, method := range []string{"POST", "GET"} {
		resp, body := one.do(t, method, queuePath(plain), "", cy.bearer()...)
		if resp.StatusCode != 404 || body["type"] != "/problems/no-waiting-room" || resp.Header.Get("RateLimit") != "" {
			t.Errorf("%s queue of an event without a room = %d %v, want 404 no-waiting-room, no token spent", method, resp.StatusCode, body)
		}
		for _, id := range []string{ids.New(), "42"} {
			if resp, body := one.do(t, method, queuePath(id), "", cy.bearer()...); resp.StatusCode != 404 || body["type"] != "/problems/not-found" {
				t.Errorf("%s queue of event %s = %d %v, want 404 not-found", method, id, resp.StatusCode, body)
			}
		}
	}
}

// TestWaitingRoomFailsClosed: with Redis stopped, joining, polling and holding
// on a waiting-room event answer 503 service-overloaded with Retry-After (even
// for a buyer admitted before), while holds on an ordinary event go on.
func TestWaitingRoomFailsClosed(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb, err := conn.Redis(private.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	ts := newTestServer(t, nil, nil, rdb)
	org, ada, bob := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	room, roomSeats := newEvent(t, ts, org, roomEventBody(1, 2, 1000, time.Now().Add(-time.Minute)))
	plain, plainSeats := newEvent(t, ts, org, eventBody(1, 2))
	admitted(t, ts, bob, room)
	private.Stop()

	for _, r := range []struct {
		who          testAccount
		method, path string
		body         string
	}{
		{ada, "POST", queuePath(room), ""},
		{ada, "GET", queuePath(room), ""},
		{bob, "GET", queuePath(room), ""},
		{bob, "POST", "/v1/holds", holdBody(room, roomSeats[0])},
	} {
		resp, body := ts.do(t, r.method, r.path, r.body, r.who.bearer()...)
		if resp.StatusCode != 503 || body["type"] != "/problems/service-overloaded" || resp.Header.Get("Retry-After") != "2" {
			t.Errorf("%s %s with Redis down = %d %v Retry-After %q; want 503 service-overloaded, Retry-After: 2",
				r.method, r.path, resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
	}
	for i, b := range []testAccount{ada, bob} {
		if resp, body := ts.do(t, "POST", "/v1/holds", holdBody(plain, plainSeats[i]), b.bearer()...); resp.StatusCode != 201 {
			t.Errorf("hold on an ordinary event with Redis down = %d %v, want 201", resp.StatusCode, body)
		}
	}
}
