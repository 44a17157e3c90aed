package httpapi_test

import (
	"context"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// limitedShop is a server whose holds are limited by hold-buyer and
// hold-organizer (set by env), with an organizer's event of 100 seats, each
// hold taking the next seat.
type limitedShop struct {
	*testServer
	event string
	seats []string
	next  int
}

func newLimitedShop(t *testing.T, env ...string) *limitedShop {
	t.Helper()
	ts := newTestServer(t, limitEnv(env...), nil, nil)
	s := &limitedShop{testServer: ts}
	s.event, s.seats = newEvent(t, ts, newAccount(t, ts, auth.Organizer), eventBody(10, 10))
	return s
}

// hold asks for the next seat of event (the shop's own when empty) as buyer.
func (s *limitedShop) hold(t *testing.T, buyer testAccount, event string, seats []string) answer {
	t.Helper()
	if event == "" {
		event, seats = s.event, s.seats
	}
	seat := seats[s.next%len(seats)]
	s.next++
	return s.request(t, "POST", "/v1/holds", holdBody(event, seat), buyer.bearer()...)
}

// holdsPlaced counts the holds in the database: the requests that got past
// the limits to the handler.
func (s *limitedShop) holdsPlaced(t *testing.T) int {
	t.Helper()
	var n int
	if err := s.DB.QueryRow(context.Background(), `SELECT count(*) FROM holds`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRateLimitHeadersAndRefusal(t *testing.T) {
	t.Parallel()
	s := newLimitedShop(t) // hold-buyer 10/1m, hold-organizer 200/1s
	buyer := newAccount(t, s.testServer, auth.Buyer)

	type want struct {
		status                         int
		policy, rateLimit              string
		limit, remaining, reset, retry string
	}
	steps := []want{
		{201, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=9;t=6`, "10", "9", "6", ""},
		{201, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=8;t=12`, "10", "8", "12", ""},
	}
	for i := 3; i <= 10; i++ {
		steps = append(steps, want{status: 201})
	}
	steps = append(steps, want{429, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=0;t=60`, "10", "0", "60", "6"})

	for i, w := range steps {
		a := s.hold(t, buyer, "", nil)
		if a.StatusCode != w.status {
			t.Fatalf("request %d: status %d, want %d (%s)", i+1, a.StatusCode, w.status, a.raw)
		}
		if w.policy == "" {
			continue
		}
		for header, value := range map[string]string{
			"RateLimit-Policy": w.policy, "RateLimit": w.rateLimit, "X-RateLimit-Limit": w.limit,
			"X-RateLimit-Remaining": w.remaining, "X-RateLimit-Reset": w.reset, "Retry-After": w.retry,
		} {
			if got := a.Header.Get(header); got != value {
				t.Errorf("request %d: %s = %q, want %q", i+1, header, got, value)
			}
		}
		if w.status == 429 {
			p := a.problem(t)
			if !p.is("rate-limited") || p.Limit != "hold-buyer" || len(p.ViolatedPolicies) != 1 ||
				p.ViolatedPolicies[0] != "hold-buyer" || p.RetryAfterMS < 5000 || p.RetryAfterMS > 6000 {
				t.Errorf("refusal = %s", a.raw)
			}
		}
	}
	if got := s.holdsPlaced(t); got != 10 {
		t.Errorf("%d holds placed, want 10: a refusal must not reach the handler", got)
	}
}

func TestRateLimitTightestOfTwoAndNothingSpentOnRefusal(t *testing.T) {
	t.Parallel()
	s := newLimitedShop(t, "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "2/1m")
	b1, b2, b3 := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)

	if got := s.hold(t, b1, "", nil).Header.Get("RateLimit"); got != `"hold-organizer";r=1;t=30` {
		t.Errorf("headers show %q, want the tighter hold-organizer", got)
	}
	s.hold(t, b2, "", nil)
	a := s.hold(t, b3, "", nil)
	if a.StatusCode != 429 || a.problem(t).Limit != "hold-organizer" || a.Header.Get("Retry-After") != "30" {
		t.Fatalf("third buyer on the organizer = %d %s Retry-After %q", a.StatusCode, a.raw, a.Header.Get("Retry-After"))
	}
	// b3 was refused by the organizer: its own bucket must still be full.
	d := s.Limiter.Allow(context.Background(), ratelimit.Check{Limit: limits.HoldBuyer, Key: b3.id})
	if r := d.Results[0]; !d.Allowed || r.Remaining != 9 {
		t.Errorf("b3's bucket after its refusal: %+v; want 9 left after this check (the refusal spent no buyer token)", r)
	}
	if got := s.holdsPlaced(t); got != 2 {
		t.Errorf("%d holds placed, want 2", got)
	}
}

func TestRetryAfterRoundsUpToWholeSeconds(t *testing.T) {
	t.Parallel()
	s := newLimitedShop(t, "STAGEDOOR_LIMIT_HOLD_BUYER", "5/1s")
	fast := newAccount(t, s.testServer, auth.Buyer)
	var a answer
	for range 20 { // the 6th, unless the machine is so slow that a token came back meanwhile
		if a = s.hold(t, fast, "", nil); a.StatusCode != 201 {
			break
		}
	}
	if ms := a.problem(t).RetryAfterMS; a.StatusCode != 429 || a.Header.Get("Retry-After") != "1" || ms < 1 || ms > 200 {
		t.Errorf("the first refusal of 5/1s = %d, Retry-After %q, retry_after_ms %v; want 429, 1, at most 200",
			a.StatusCode, a.Header.Get("Retry-After"), ms)
	}
}
