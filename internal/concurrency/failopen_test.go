package concurrency

import (
	"context"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestFailOpen: Redis stops answering (its process frozen: connections hang,
// nothing is refused). The first requests go on after the 50 ms deadline,
// fail_open; then the breaker opens, and every request goes on at once,
// fail_open, without a call (counted "refused"). A release meanwhile does not
// wait either. Once Redis answers again, the limiter enforces again.
func TestFailOpen(t *testing.T) {
	srv := testenv.StartPrivateRedis(t)
	rdb := newClient(t, "redis://"+srv.Addr+"/0", 8)
	const timeout = 50 * time.Millisecond
	l, reg := newTestLimiter(rdb, Options{Max: 1, Timeout: timeout, BreakerFailures: 3,
		BreakerCooldown: 2 * time.Second, Prefix: "sd:"})
	ctx := context.Background()

	d, held := l.Enter(ctx, "8812")
	if d.Outcome != OutcomeAllowed {
		t.Fatalf("with Redis up: %+v", d)
	}
	srv.Freeze()
	thawed := false
	defer func() {
		if !thawed {
			srv.Thaw()
		}
	}()

	for i := range 3 {
		start := time.Now()
		d, rel := l.Enter(ctx, "8812")
		rel()
		if !d.Allowed || d.Outcome != OutcomeFailOpen || d.InFlight != 0 {
			t.Fatalf("frozen Redis, call %d: %+v", i+1, d)
		}
		t.Logf("call %d, before the breaker opens: %s", i+1, time.Since(start))
	}
	if got := redisCalls(t, reg, "failed"); got != 3 {
		t.Fatalf("failed calls %d, want 3", got)
	}
	if st := l.nodes.For(ctx, l.Key("8812")).State(); st != gobreaker.StateOpen {
		t.Fatalf("breaker %s after 3 failures, want open", st)
	}

	const n = 1000
	start := time.Now()
	for i := range n {
		d, rel := l.Enter(ctx, "8812")
		rel()
		if !d.Allowed || d.Outcome != OutcomeFailOpen {
			t.Fatalf("open breaker, call %d: %+v", i+1, d)
		}
	}
	took := time.Since(start)
	t.Logf("%d calls with the breaker open: %s, %s each", n, took, took/n)
	if got := redisCalls(t, reg, "refused"); got != n {
		t.Fatalf("refused calls %d, want %d: a call reached the frozen Redis", got, n)
	}
	if took > n*timeout/10 { // 5 s: only a call that waited for Redis could take that long
		t.Fatalf("%d calls with the breaker open took %s", n, took)
	}
	if decisions(l, OutcomeFailOpen) != 3+n {
		t.Fatalf("fail_open counted %d, want %d", decisions(l, OutcomeFailOpen), 3+n)
	}

	held() // refused by the breaker at once; the lease lapses in Redis
	if l.Leases() != 0 {
		t.Fatalf("Leases %d after release", l.Leases())
	}
	if got := redisCalls(t, reg, "refused"); got != n+1 {
		t.Fatalf("refused calls %d, want %d", got, n+1)
	}

	srv.Thaw()
	thawed = true
	// The held lease was never removed; once the breaker lets a probe
	// through, the limiter enforces again: the buyer's place is still taken.
	testenv.Eventually(t, 10*time.Second, func() bool {
		d, rel := l.Enter(ctx, "8812")
		rel()
		return d.Outcome == OutcomeDenied
	}, "enforcing again")
}

// TestFailOpenClosedPort: nobody listens: every request goes on, fail_open,
// and after BreakerFailures of them the breaker refuses without dialling.
func TestFailOpenClosedPort(t *testing.T) {
	rdb := newClient(t, "redis://127.0.0.1:1/0", 4)
	l, reg := newTestLimiter(rdb, Options{Max: 1, Timeout: 50 * time.Millisecond})
	ctx := context.Background()
	for i := range 20 {
		d, rel := l.Enter(ctx, "8812")
		rel()
		if !d.Allowed || d.Outcome != OutcomeFailOpen {
			t.Fatalf("call %d: %+v", i+1, d)
		}
	}
	if f, r := redisCalls(t, reg, "failed"), redisCalls(t, reg, "refused"); f != 5 || r != 15 {
		t.Fatalf("failed %d, refused %d; want 5 (the default breaker) and 15", f, r)
	}
}
