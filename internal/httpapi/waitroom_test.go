package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
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
	if a := ts.request(t, "POST", queuePath(eventID), "", buyer.bearer()...); a.StatusCode != 200 {
		t.Fatalf("joining the queue = %d %s", a.StatusCode, a.raw)
	}
	var q queueJSON
	waitFor(t, 5*time.Second, "the buyer's admission", func() bool {
		q = as[queueJSON](t, ts.request(t, "GET", queuePath(eventID), "", buyer.bearer()...))
		return q.Status == "admitted"
	})
	return *q.AdmittedUntil
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

	a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...)
	if p := a.problem(t); a.StatusCode != 403 || !p.is("not-admitted") || !strings.Contains(p.Detail, "not joined") {
		t.Fatalf("hold before joining = %d %s, want 403 not-admitted", a.StatusCode, a.raw)
	}
	if a.Header.Get("RateLimit") != "" {
		t.Error("a hold refused for want of admission was decided by the hold limits; it should spend no token")
	}
	if a := ts.request(t, "GET", queuePath(event), "", ada.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("GET queue before joining = %d %s, want 404", a.StatusCode, a.raw)
	}

	a = ts.request(t, "POST", queuePath(event), "", ada.bearer()...)
	q := as[queueJSON](t, a)
	if a.StatusCode != 200 || q.Status != "admitted" || q.AdmittedUntil == nil || time.Until(*q.AdmittedUntil) > 2*time.Second ||
		q.Position != nil || a.Header.Get("RateLimit") != `"queue-join";r=4;t=12` {
		t.Fatalf("joining a quiet room = %d %s (RateLimit %q); want admitted at once, for 2 s",
			a.StatusCode, a.raw, a.Header.Get("RateLimit"))
	}
	until := *q.AdmittedUntil
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...); a.StatusCode != 201 {
		t.Fatalf("hold while admitted = %d %s", a.StatusCode, a.raw)
	}

	time.Sleep(time.Until(until) + 50*time.Millisecond)
	a = ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...)
	if p := a.problem(t); a.StatusCode != 403 || !p.is("not-admitted") || !strings.Contains(p.Detail, "lapsed") {
		t.Fatalf("hold after the admission lapsed = %d %s, want 403 not-admitted", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", queuePath(event), "", ada.bearer()...); a.StatusCode != 404 || !strings.Contains(a.problem(t).Detail, "lapsed") {
		t.Errorf("GET queue after the admission lapsed = %d %s, want 404 saying so", a.StatusCode, a.raw)
	}
	if again := admitted(t, ts, ada, event); !again.After(until) {
		t.Errorf("joining again gave an admission until %s, want after %s", again, until)
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...); a.StatusCode != 201 {
		t.Errorf("hold after joining again = %d %s", a.StatusCode, a.raw)
	}

	keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under %s: %v, %v", prefix, keys, err)
	}
	for _, k := range keys {
		// PTTL is -2 for a key gone since KEYS listed it (a concurrency lease
		// given back after its response was written), -1 for one that never
		// expires.
		if ttl := rdb.PTTL(context.Background(), k).Val(); ttl <= 0 && ttl != -2 {
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
	onSale := time.Now().Add(time.Hour)
	event, _ := newEvent(t, one, org, roomEventBody(1, 2, 1, onSale))

	for i, b := range buyers {
		a := one.request(t, "POST", queuePath(event), "", b.bearer()...)
		// At least until the sale opens, as of the answer (a loaded machine
		// may take seconds to get here, so not a fixed 3600).
		if q := as[queueJSON](t, a); a.StatusCode != 200 || q.Status != "waiting" || q.Position == nil ||
			q.EstimatedWaitSeconds == nil || *q.EstimatedWaitSeconds < int64(time.Until(onSale)/time.Second) {
			t.Fatalf("buyer %d joining = %d %s, want waiting until after the sale opens", i, a.StatusCode, a.raw)
		}
	}
	cy := buyers[2]
	first := as[queueJSON](t, one.request(t, "GET", queuePath(event), "", cy.bearer()...))
	for i := 2; i <= 5; i++ {
		a := one.request(t, "POST", queuePath(event), "", cy.bearer()...)
		if q := as[queueJSON](t, a); a.StatusCode != 200 || *q.Position != *first.Position || *q.EstimatedWaitSeconds > *first.EstimatedWaitSeconds {
			t.Fatalf("join %d = %d %s; want her place kept: %+v", i, a.StatusCode, a.raw, first)
		}
	}
	a := one.request(t, "POST", queuePath(event), "", cy.bearer()...)
	if a.StatusCode != 429 || a.problem(t).Limit != "queue-join" || a.Header.Get("Retry-After") == "" {
		t.Fatalf("6th join in a minute = %d %s, want 429 queue-join with Retry-After", a.StatusCode, a.raw)
	}
	for name, ts := range map[string]*testServer{"this": one, "another": two} {
		a := ts.request(t, "GET", queuePath(event), "", cy.bearer()...)
		if q := as[queueJSON](t, a); a.StatusCode != 200 || q.Status != "waiting" || q.Position == nil || *q.Position != *first.Position {
			t.Errorf("GET on %s instance = %d %s, want %+v", name, a.StatusCode, a.raw, first)
		}
	}
	if a := one.request(t, "POST", queuePath(event), "", org.bearer()...); a.StatusCode != 403 {
		t.Errorf("an organizer joining = %d %s, want 403", a.StatusCode, a.raw)
	}

	plain, _ := newEvent(t, one, org, eventBody(1, 1))
	for _, method := range []string{"POST", "GET"} {
		a := one.request(t, method, queuePath(plain), "", cy.bearer()...)
		if a.StatusCode != 404 || !a.problem(t).is("no-waiting-room") || a.Header.Get("RateLimit") != "" {
			t.Errorf("%s queue of an event without a room = %d %s, want 404 no-waiting-room, no token spent", method, a.StatusCode, a.raw)
		}
		for _, id := range []string{ids.New(), "42"} {
			if a := one.request(t, method, queuePath(id), "", cy.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
				t.Errorf("%s queue of event %s = %d %s, want 404 not-found", method, id, a.StatusCode, a.raw)
			}
		}
	}
}

// TestWaitingRoomFailsClosed: with Redis stopped, joining, polling (with a
// queue token or without) and holding on a waiting-room event answer 503
// service-overloaded with Retry-After (a buyer admitted before too, when this
// instance has not read her admission), while holds on an ordinary event go
// on, and so does the hold of a buyer whose admission this instance read
// before the outage: it is remembered until it ends.
func TestWaitingRoomFailsClosed(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb := redisClient(t, private.URL)
	db := testenv.Postgres(t)
	ts := newTestServer(t, nil, db, rdb)
	other := newTestServer(t, nil, db, rdb)
	org, ada, bob, cy := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer),
		newAccount(t, ts, auth.Buyer)
	room, roomSeats := newEvent(t, ts, org, roomEventBody(1, 3, 1000, time.Now().Add(-time.Minute)))
	plain, plainSeats := newEvent(t, ts, org, eventBody(1, 2))
	admitted(t, ts, bob, room)
	admitted(t, other, cy, room) // read by the other instance only
	token := as[queueJSON](t, ts.request(t, "GET", queuePath(room), "", bob.bearer()...)).QueueToken
	private.Stop()

	for _, r := range []struct {
		who          testAccount
		method, path string
		body         string
	}{
		{ada, "POST", queuePath(room), ""},
		{ada, "GET", queuePath(room), ""},
		{bob, "GET", queuePath(room), ""},
		{bob, "GET", queuePath(room), token}, // a poll with her token reads the room's progress
		{cy, "POST", "/v1/holds", holdBody(room, roomSeats[0])},
	} {
		header := r.who.bearer()
		if r.method == "GET" && r.body != "" {
			header, r.body = append(header, "Queue-Token", r.body), ""
		}
		a := ts.request(t, r.method, r.path, r.body, header...)
		if a.StatusCode != 503 || !a.problem(t).is("service-overloaded") || a.Header.Get("Retry-After") != "2" {
			t.Errorf("%s %s with Redis down = %d %s Retry-After %q; want 503 service-overloaded, Retry-After: 2",
				r.method, r.path, a.StatusCode, a.raw, a.Header.Get("Retry-After"))
		}
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(room, roomSeats[1]), bob.bearer()...); a.StatusCode != 201 {
		t.Errorf("hold with Redis down by a buyer whose admission this instance read = %d %s, want 201", a.StatusCode, a.raw)
	}
	for i, b := range []testAccount{ada, bob} {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(plain, plainSeats[i]), b.bearer()...); a.StatusCode != 201 {
			t.Errorf("hold on an ordinary event with Redis down = %d %s, want 201", a.StatusCode, a.raw)
		}
	}
}
