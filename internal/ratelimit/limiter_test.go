package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sony/gobreaker/v2"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

func outageLimits(t *testing.T) []Definition {
	return []Definition{
		def(t, "open", "1/1m", Enforce, FailOpen),
		def(t, "login", "10/1m", Enforce, Fallback),
	}
}

// checkOutage asserts what an unreachable Redis does to l: the FailOpen limit
// allows, the Fallback limit enforces 10/1m on this instance.
func checkOutage(t *testing.T, l *Limiter) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		if d := l.Allow(ctx, Check{Limit: "open", Key: "k"}); !d.Allowed || d.Results[0].Outcome != OutcomeFailOpen {
			t.Fatalf("fail-open limit: %+v", d)
		}
	}
	for i := range 10 {
		d := l.Allow(ctx, Check{Limit: "login", Key: "10.0.0.1"})
		if r := d.Results[0]; !d.Allowed || r.Outcome != OutcomeFallbackAllowed || r.Remaining != 9-i {
			t.Fatalf("login %d: %+v", i+1, d)
		}
	}
	d := l.Allow(ctx, Check{Limit: "login", Key: "10.0.0.1"})
	if r := d.Results[0]; d.Allowed || r.Outcome != OutcomeFallbackDenied || r.RetryAfter <= 5*time.Second || r.RetryAfter > 6*time.Second {
		t.Fatalf("11th login: %+v", d)
	}
	if got := [3]int{count(l, "open", OutcomeFailOpen), count(l, "login", OutcomeFallbackAllowed),
		count(l, "login", OutcomeFallbackDenied)}; got != [3]int{3, 10, 1} {
		t.Fatalf("fail_open, fallback_allowed, fallback_denied = %v, want [3 10 1]", got)
	}
}

func TestOutageStoppedRedis(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	// A generous deadline: the first call dials and loads the script, which a
	// loaded machine may not finish in 50ms. A stopped server refuses at once.
	l, _ := newTestLimiter(newClient(t, private.URL, 4), Options{Timeout: 2 * time.Second, Limits: outageLimits(t)})
	if d := l.Allow(context.Background(), Check{Limit: "open", Key: "k"}); !d.Allowed || d.Results[0].Outcome != OutcomeAllowed {
		t.Fatalf("before the outage: %+v", d)
	}
	private.Stop()
	checkOutage(t, l)
}

func TestOutageDeadURL(t *testing.T) {
	t.Parallel()
	l, _ := newTestLimiter(newClient(t, testenv.DeadRedisURL(t), 4), Options{Timeout: 50 * time.Millisecond, Limits: outageLimits(t)})
	checkOutage(t, l)
}

// With the breaker open a decision makes no call to Redis at all.
func TestBreakerOpenMakesNoCall(t *testing.T) {
	t.Parallel()
	counter := testenv.CountScripts(newClient(t, testenv.DeadRedisURL(t), 4))
	l, _ := newTestLimiter(counter, Options{Timeout: 50 * time.Millisecond, BreakerCooldown: time.Hour, Limits: outageLimits(t)})
	for range 5 {
		l.Allow(context.Background(), Check{Limit: "open", Key: "k"})
	}
	if st := l.nodes.For(context.Background(), "").State(); st != gobreaker.StateOpen {
		t.Fatalf("after 5 failures the breaker is %v", st)
	}
	calls := counter.Calls()
	for range 100 {
		if d := l.Allow(context.Background(), Check{Limit: "open", Key: "k"}); !d.Allowed {
			t.Fatalf("%+v", d)
		}
	}
	if n := counter.Calls() - calls; n != 0 {
		t.Fatalf("%d calls to Redis with the breaker open", n)
	}
	if n := count(l, "open", OutcomeFailOpen); n != 105 {
		t.Fatalf("fail_open %d, want 105", n)
	}
}

// After the cool-down the breaker lets one probe through; when Redis is back the
// decisions are Redis's again. Each try asks for a key of its own: on a loaded
// machine a probe can reach the restarted Redis and spend the key's one token
// although its answer came too late (a fail-open decision), and a key so spent
// would be denied for the rest of the minute.
func TestBreakerRecovers(t *testing.T) {
	t.Parallel()
	server := testenv.StartPrivateRedis(t)
	counter := testenv.CountScripts(newClient(t, "redis://"+server.Addr+"/0", 4))
	l, _ := newTestLimiter(counter, Options{Timeout: 250 * time.Millisecond, BreakerCooldown: 100 * time.Millisecond, Limits: outageLimits(t)})
	server.Stop()
	for range 5 {
		l.Allow(context.Background(), Check{Limit: "open", Key: "k"})
	}
	if st := l.nodes.For(context.Background(), "").State(); st != gobreaker.StateOpen {
		t.Fatalf("breaker %v", st)
	}
	server.Restart()
	var key string
	try := 0
	testenv.Eventually(t, 10*time.Second, func() bool {
		key = fmt.Sprintf("k%d", try)
		try++
		return l.Allow(context.Background(), Check{Limit: "open", Key: key}).Results[0].Outcome == OutcomeAllowed
	}, "a fresh key's decision made in Redis again after its restart")
	if d := l.Allow(context.Background(), Check{Limit: "open", Key: key}); d.Allowed || d.Results[0].Outcome != OutcomeDenied {
		t.Fatalf("second of 1/1m after recovery: %+v", d)
	}
}

func TestShadow(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: []Definition{
		def(t, "dark", "2/1m", Shadow, FailOpen), def(t, "real", "5/1m", Enforce, FailOpen)}})
	checks := []Check{{Limit: "dark", Key: "k"}, {Limit: "real", Key: "k"}}
	for i := range 4 {
		d := l.Allow(context.Background(), checks...)
		if !d.Allowed || d.Results[1].Remaining != 4-i {
			t.Fatalf("request %d: %+v", i+1, d)
		}
		want := OutcomeAllowed
		if i >= 2 {
			want = OutcomeShadowDenied
		}
		if r := d.Results[0]; r.Outcome != want || !r.Allowed || (want == OutcomeShadowDenied) != (r.RetryAfter > 0) {
			t.Fatalf("request %d, shadow result %+v, want %s", i+1, r, want)
		}
		if r, _ := d.Tightest(); r.Limit != "real" {
			t.Fatalf("tightest %s, want real (a shadow limit is not shown)", r.Limit)
		}
	}
	if got := [2]int{count(l, "dark", OutcomeAllowed), count(l, "dark", OutcomeShadowDenied)}; got != [2]int{2, 2} {
		t.Fatalf("dark allowed, shadow_denied = %v", got)
	}
}

func TestOffNeverCallsRedis(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	counter := testenv.CountScripts(rdb)
	l, _ := newTestLimiter(counter, Options{Prefix: prefix, Limits: []Definition{
		def(t, "kill", "1/1m", Off, FailOpen), def(t, "on", "100/1m", Enforce, FailOpen)}})
	for range 10 {
		if d := l.Allow(context.Background(), Check{Limit: "kill", Key: "k"}); !d.Allowed || d.Results[0].Outcome != OutcomeOff {
			t.Fatalf("%+v", d)
		}
	}
	if n := counter.Calls(); n != 0 {
		t.Fatalf("%d calls for a limit that is off", n)
	}
	if d := l.Allow(context.Background(), Check{Limit: "kill", Key: "k"}, Check{Limit: "on", Key: "k"}); !d.Allowed {
		t.Fatalf("%+v", d)
	}
	if n, keys := count(l, "kill", OutcomeOff), keysWithPrefix(t, rdb, prefix); n != 11 || len(keys) != 1 || keys[0] != l.key("on", "k") {
		t.Fatalf("off counted %d, keys %v", n, keys)
	}
}

// A refused key is not sent to Redis again until its retry time; SetSetting
// forgets the refusals of that limit only.
func TestDenialCache(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	counter := testenv.CountScripts(rdb)
	clock := newFakeClock()
	l, _ := newTestLimiter(counter, Options{Prefix: prefix, Clock: clock.Now, Limits: []Definition{
		def(t, "once", "1/1m", Enforce, FailOpen), def(t, "other", "1/1m", Enforce, FailOpen)}})
	ctx := context.Background()
	l.Allow(ctx, Check{Limit: "once", Key: "k"}, Check{Limit: "other", Key: "k"})
	first := l.Allow(ctx, Check{Limit: "once", Key: "k"})
	l.Allow(ctx, Check{Limit: "other", Key: "k"})
	calls := counter.Calls()
	if first.Allowed || first.Results[0].Cached || first.RetryAfter <= 0 {
		t.Fatalf("second request: %+v", first)
	}
	for range 10 {
		clock.Add(time.Second)
		d := l.Allow(ctx, Check{Limit: "once", Key: "k"})
		r := d.Results[0]
		if d.Allowed || !r.Cached || r.RetryAfter <= 0 || r.RetryAfter >= first.RetryAfter || r.Remaining != 0 {
			t.Fatalf("cached refusal: %+v", r)
		}
	}
	if n := counter.Calls() - calls; n != 0 {
		t.Fatalf("%d calls for a key refused until later", n)
	}
	if n := count(l, "once", OutcomeDenied); n != 11 {
		t.Fatalf("denied %d, want 11", n)
	}
	// Past the retry time on this instance's clock, Redis is asked again.
	clock.Add(first.RetryAfter)
	l.Allow(ctx, Check{Limit: "once", Key: "k"})
	if n := counter.Calls() - calls; n != 1 {
		t.Fatalf("%d calls after the retry time, want 1", n)
	}
	if d := l.Allow(ctx, Check{Limit: "other", Key: "k"}); d.Allowed || d.Results[0].Cached {
		t.Fatalf("other, past its retry time on this clock: %+v", d)
	}
	calls = counter.Calls()

	// A new setting for "once" clears its cache, not other's.
	if err := l.SetSetting("once", Setting{Limit: PerMinute(1), Mode: Enforce}); err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(ctx, Check{Limit: "once", Key: "k"}); d.Results[0].Cached || counter.Calls()-calls != 1 {
		t.Fatalf("after SetSetting: %+v", d)
	}
	if d := l.Allow(ctx, Check{Limit: "other", Key: "k"}); !d.Results[0].Cached {
		t.Fatalf("other's cache was cleared too: %+v", d)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	l, reg := newTestLimiter(nil, Options{Timeout: 50 * time.Millisecond, Limits: outageLimits(t)})
	if got := l.Names(); len(got) != 2 || got[0] != "open" || got[1] != "login" {
		t.Fatalf("Names %v", got)
	}
	s := Setting{Limit: PerSecond(3), Mode: Shadow}
	if err := l.SetSetting("open", s); err != nil {
		t.Fatal(err)
	}
	if got, ok := l.Setting("open"); !ok || got != s {
		t.Fatalf("Setting = %v %v", got, ok)
	}
	for _, bad := range []Setting{{Limit: PerSecond(0), Mode: Enforce}, {Limit: PerSecond(1), Mode: "loud"}} {
		if err := l.SetSetting("open", bad); err == nil {
			t.Fatalf("SetSetting(%v) accepted", bad)
		}
	}
	if err := l.SetSetting("nope", s); err == nil {
		t.Fatal("SetSetting of an unknown limit accepted")
	}
	if _, ok := l.Setting("nope"); ok {
		t.Fatal("Setting of an unknown limit")
	}
	// Every limit × decision is exported from the start, on the registry given.
	if n := testutil.CollectAndCount(reg, "stagedoor_ratelimit_decisions_total"); n != 2*len(outcomes) {
		t.Fatalf("%d series, want %d", n, 2*len(outcomes))
	}
	// A second limiter on the same registry shares the counter.
	l2 := New(nil, Options{Registerer: reg, Limits: outageLimits(t)})
	l2.limits["open"].counts[0].Inc()
	if count(l, "open", OutcomeAllowed) != 1 {
		t.Fatal("the second limiter does not share the counter")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Allow with an unknown limit did not panic")
		}
	}()
	l.Allow(context.Background(), Check{Limit: "nope"})
}

// Callers whose own context has ended are no evidence against Redis: the breaker
// stays closed and the next caller is decided by Redis.
func TestCallerGoneDoesNotTripBreaker(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: outageLimits(t)})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if d := l.Allow(gone, Check{Limit: "open", Key: "k"}); d.Results[0].Outcome != OutcomeFailOpen {
			t.Fatalf("cancelled caller: %+v", d)
		}
	}
	if st := l.nodes.For(context.Background(), "").State(); st != gobreaker.StateClosed {
		t.Fatalf("breaker %v after cancelled callers", st)
	}
	if d := l.Allow(context.Background(), Check{Limit: "open", Key: "k"}); d.Results[0].Outcome != OutcomeAllowed {
		t.Fatalf("next caller: %+v", d)
	}
}

// A client chooses the identity of some buckets (an email, an address). However
// long it is, its key in Redis is short, and still one bucket per identity.
func TestLongIdentitiesMakeShortKeys(t *testing.T) {
	t.Parallel()
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: []Definition{def(t, "email", "1/1m", Enforce, FailOpen)}})
	ctx := context.Background()
	long := strings.Repeat("a", 60<<10) + "@example.com"
	if d := l.Allow(ctx, Check{Limit: "email", Key: long}); !d.Allowed {
		t.Fatalf("first = %+v", d)
	}
	if d := l.Allow(ctx, Check{Limit: "email", Key: long}); d.Allowed {
		t.Fatal("the second of 1/1m on the same long identity was allowed: not one bucket")
	}
	if d := l.Allow(ctx, Check{Limit: "email", Key: long + "x"}); !d.Allowed {
		t.Fatal("another long identity shares the first one's bucket")
	}
	keys := keysWithPrefix(t, rdb, prefix)
	if len(keys) != 2 {
		t.Fatalf("keys %v, want one per identity", keys)
	}
	for _, k := range keys {
		if n := len(k) - len(prefix); n > 100 {
			t.Errorf("key of %d bytes (after the prefix): %.120s…", n, k)
		}
	}
}
