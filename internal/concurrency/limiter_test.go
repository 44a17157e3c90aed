package concurrency

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestRaceAdmitsExactlyMax: 50 requests of one buyer arrive at once against
// Max 5: exactly 5 take a lease and 45 are refused, whatever the interleaving.
// Once the 5 end, 5 more get in, and the 6th is refused again.
func TestRaceAdmitsExactlyMax(t *testing.T) {
	rdb, prefix := sharedRedis(t, 60)
	l, _ := newTestLimiter(rdb, Options{Max: 5, Prefix: prefix})
	ctx := context.Background()

	const n = 50
	ds := make([]Decision, n)
	rels := make([]func(), n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			ds[i], rels[i] = l.Enter(ctx, "8812")
		})
	}
	close(start)
	wg.Wait()

	allowed, denied := 0, 0
	for _, d := range ds {
		switch d.Outcome {
		case OutcomeAllowed:
			allowed++
			if !d.Allowed || d.InFlight < 1 || d.InFlight > 5 || d.RetryAfter != 0 {
				t.Errorf("allowed decision %+v", d)
			}
		case OutcomeDenied:
			denied++
			if d.Allowed || d.InFlight != 5 || d.Max != 5 || d.RetryAfter != DefaultRetryAfter || d.Limit != testBuyer {
				t.Errorf("denied decision %+v", d)
			}
		default:
			t.Errorf("decision %+v", d)
		}
	}
	if allowed != 5 || denied != 45 {
		t.Fatalf("allowed %d, denied %d; want 5 and 45", allowed, denied)
	}
	if got := len(members(t, rdb, l.Key("8812"))); got != 5 {
		t.Fatalf("%d leases in Redis, want 5", got)
	}
	if l.Leases() != 5 || testutil.ToFloat64(l.live) != 5 {
		t.Fatalf("Leases %d, gauge %v; want 5", l.Leases(), testutil.ToFloat64(l.live))
	}
	if decisions(l, OutcomeAllowed) != 5 || decisions(l, OutcomeDenied) != 45 {
		t.Fatalf("counted %d allowed, %d denied", decisions(l, OutcomeAllowed), decisions(l, OutcomeDenied))
	}

	for _, rel := range rels { // the refused ones' releases do nothing
		rel()
	}
	if l.Leases() != 0 || testutil.ToFloat64(l.live) != 0 {
		t.Fatalf("after release: Leases %d, gauge %v", l.Leases(), testutil.ToFloat64(l.live))
	}
	for i := range 5 {
		d, _ := l.Enter(ctx, "8812")
		if !d.Allowed || d.InFlight != i+1 {
			t.Fatalf("after release, request %d: %+v", i+1, d)
		}
	}
	if d, _ := l.Enter(ctx, "8812"); d.Outcome != OutcomeDenied {
		t.Fatalf("6th after release: %+v", d)
	}
	if d, _ := l.Enter(ctx, "other-buyer"); !d.Allowed || d.InFlight != 1 {
		t.Fatalf("another buyer: %+v", d)
	}
}

// TestReleaseFreesAtOnce: a released place is free for the next request at
// once; a second release of the same request does nothing, and in particular
// does not free the place of the request that took it since.
func TestReleaseFreesAtOnce(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix, Lease: 10 * time.Second})
	ctx := context.Background()
	key := l.Key("8812")

	d1, rel1 := l.Enter(ctx, "8812")
	if !d1.Allowed || d1.InFlight != 1 {
		t.Fatalf("first: %+v", d1)
	}
	ttl := rdb.PTTL(ctx, key).Val()
	if ttl <= 0 || ttl > 10*time.Second {
		t.Fatalf("the key's time to live is %s, want (0, 10s]", ttl)
	}
	if d, rel := l.Enter(ctx, "8812"); d.Allowed {
		t.Fatalf("second while the first runs: %+v", d)
	} else {
		rel()
	}
	rel1()
	d2, rel2 := l.Enter(ctx, "8812")
	if !d2.Allowed || d2.InFlight != 1 {
		t.Fatalf("after release: %+v", d2)
	}
	rel1() // again: must not remove the second request's lease
	rel1()
	if got := len(members(t, rdb, key)); got != 1 {
		t.Fatalf("%d leases after releasing the first twice, want 1", got)
	}
	if d, _ := l.Enter(ctx, "8812"); d.Allowed {
		t.Fatalf("third while the second runs: %+v", d)
	}
	rel2()
	rel2()
	if n := rdb.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the key outlives its last lease")
	}
	if l.Leases() != 0 || testutil.ToFloat64(l.live) != 0 {
		t.Fatalf("Leases %d, gauge %v after releases", l.Leases(), testutil.ToFloat64(l.live))
	}
}

// TestShadowCountsWhatItWouldRefuse: in shadow mode nothing is refused, every
// request takes a lease (so the count is the true one), and those over Max
// are counted shadow_denied. Switched to Enforce, the count carries over.
func TestShadowCountsWhatItWouldRefuse(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Max: 2, Prefix: prefix, Mode: ratelimit.Shadow})
	ctx := context.Background()

	want := []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeShadowDenied, OutcomeShadowDenied}
	var rels []func()
	for i, w := range want {
		d, rel := l.Enter(ctx, "77")
		rels = append(rels, rel)
		if !d.Allowed || d.Outcome != w || d.InFlight != i+1 {
			t.Fatalf("request %d: %+v, want %s with %d in flight", i+1, d, w, i+1)
		}
		if (w == OutcomeShadowDenied) != (d.RetryAfter > 0) {
			t.Fatalf("request %d: RetryAfter %s", i+1, d.RetryAfter)
		}
	}
	if got := len(members(t, rdb, l.Key("77"))); got != 4 {
		t.Fatalf("%d leases, want 4", got)
	}

	l.SetMode(ratelimit.Enforce)
	if l.Mode() != ratelimit.Enforce {
		t.Fatalf("mode %s", l.Mode())
	}
	if d, _ := l.Enter(ctx, "77"); d.Outcome != OutcomeDenied || d.InFlight != 4 {
		t.Fatalf("enforcing with 4 in flight: %+v", d)
	}
	rels[0]()
	rels[1]()
	rels[2]()
	if d, _ := l.Enter(ctx, "77"); d.Outcome != OutcomeAllowed || d.InFlight != 2 {
		t.Fatalf("enforcing with 1 in flight: %+v", d)
	}
	if decisions(l, OutcomeShadowDenied) != 2 || decisions(l, OutcomeAllowed) != 3 || decisions(l, OutcomeDenied) != 1 {
		t.Fatalf("counts: allowed %d, shadow_denied %d, denied %d", decisions(l, OutcomeAllowed),
			decisions(l, OutcomeShadowDenied), decisions(l, OutcomeDenied))
	}
}

// TestOffCallsNoRedis: with the limit off, a limiter on an address nobody
// answers allows at once, counts off, and never calls Redis; switched to
// Enforce the same limiter fails open, which shows the address is dead.
func TestOffCallsNoRedis(t *testing.T) {
	rdb := newClient(t, "redis://127.0.0.1:1/0", 4) // port 1: nothing listens
	l, reg := newTestLimiter(rdb, Options{Max: 1, Mode: ratelimit.Off, Timeout: 50 * time.Millisecond})
	ctx := context.Background()

	start := time.Now()
	for range 1000 {
		d, rel := l.Enter(ctx, "8812")
		if !d.Allowed || d.Outcome != OutcomeOff || d.InFlight != 0 {
			t.Fatalf("off: %+v", d)
		}
		rel()
	}
	t.Logf("1000 decisions off in %s", time.Since(start))
	if n := testutil.CollectAndCount(reg, "stagedoor_redis_calls_total"); n != 0 {
		t.Fatalf("%d series of Redis calls while off, want none", n)
	}
	if decisions(l, OutcomeOff) != 1000 || l.Leases() != 0 {
		t.Fatalf("off counted %d, Leases %d", decisions(l, OutcomeOff), l.Leases())
	}

	l.SetMode(ratelimit.Enforce)
	if d, _ := l.Enter(ctx, "8812"); d.Outcome != OutcomeFailOpen || !d.Allowed {
		t.Fatalf("enforce on a dead address: %+v", d)
	}
	if redisCalls(t, reg, "failed") != 1 {
		t.Fatalf("failed calls %d, want 1", redisCalls(t, reg, "failed"))
	}
}

// TestKilledInstanceLeasesLapse: an instance takes every place of a buyer and
// dies (no release, no renewal). Another instance is refused at once, and lets
// the buyer in again once the dead one's leases lapse, about Lease later.
func TestKilledInstanceLeasesLapse(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	const lease = time.Second
	dead, _ := newTestLimiter(rdb, Options{Max: 5, Prefix: prefix, Lease: lease})
	alive, _ := newTestLimiter(rdb, Options{Max: 5, Prefix: prefix, Lease: lease})
	ctx := context.Background()

	start := time.Now()
	for i := range 5 {
		if d, _ := dead.Enter(ctx, "8812"); !d.Allowed {
			t.Fatalf("dead instance, request %d: %+v", i+1, d)
		}
	}
	if d, _ := alive.Enter(ctx, "8812"); d.Outcome != OutcomeDenied || d.InFlight != 5 {
		t.Fatalf("other instance at once: %+v", d)
	}
	var rel func()
	testenv.Eventually(t, lease+3*time.Second, func() bool {
		var d Decision
		d, rel = alive.Enter(ctx, "8812")
		return d.Allowed
	}, "the dead instance's leases lapse")
	waited := time.Since(start)
	t.Logf("let in again %s after the first dead lease was taken (lease %s)", waited, lease)
	if waited < lease-50*time.Millisecond {
		t.Fatalf("let in again after %s, before the leases (%s) lapsed", waited, lease)
	}
	// The other dead leases, taken moments after the first, lapse moments
	// after it: the next four get in too.
	for i := range 4 {
		testenv.Eventually(t, time.Second, func() bool {
			d, _ := alive.Enter(ctx, "8812")
			if d.InFlight > 5 || d.InFlight < i+2 || (!d.Allowed && d.InFlight != 5) {
				t.Fatalf("after the lapse, request %d: %+v", i+2, d)
			}
			return d.Allowed
		}, "the other dead leases lapse")
	}
	ids := members(t, rdb, alive.Key("8812"))
	for _, id := range ids {
		if !strings.HasPrefix(id, alive.instance+":") {
			t.Fatalf("lease %s is not the live instance's: %v", id, ids)
		}
	}
	rel()
	if got := len(members(t, rdb, alive.Key("8812"))); got != 4 {
		t.Fatalf("%d leases, want 4", got)
	}
}

// TestRunRenewsLongRequests: with Run running and a lease of 300 ms, a request
// held 1.5 s keeps its place the whole time (another instance is refused on
// every try), and the place is free as soon as it ends.
func TestRunRenewsLongRequests(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	const lease = 300 * time.Millisecond
	holder, _ := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix, Lease: lease})
	other, _ := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix, Lease: lease})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { holder.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	d, rel := holder.Enter(ctx, "8812")
	if !d.Allowed {
		t.Fatalf("holder: %+v", d)
	}
	tries := 0
	for start := time.Now(); time.Since(start) < 5*lease; tries++ {
		if d, _ := other.Enter(ctx, "8812"); d.Allowed {
			t.Fatalf("after %s (lease %s) the running request lost its place: %+v", time.Since(start), lease, d)
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("refused %d times in %s", tries, 5*lease)
	rel()
	if d, rel := other.Enter(ctx, "8812"); !d.Allowed || d.InFlight != 1 {
		t.Fatalf("after release: %+v", d)
	} else {
		rel()
	}
	if n := rdb.Exists(ctx, holder.Key("8812")).Val(); n != 0 {
		t.Fatal("the key outlives its leases")
	}
}

// TestRenewSkipsLostLeases: a lease that vanished from Redis behind the
// instance's back (it lapsed while Redis was out of reach, say) is not taken
// again, since its place may be someone else's now; it is reported once and
// no longer renewed. Released leases are not renewed either.
func TestRenewSkipsLostLeases(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	l, _ := newTestLimiter(rdb, Options{Max: 5, Prefix: prefix, Lease: time.Minute})
	ctx := context.Background()
	key := l.Key("8812")

	_, relA := l.Enter(ctx, "8812")
	_, relB := l.Enter(ctx, "8812")
	_, relC := l.Enter(ctx, "other")
	defer relA()
	defer relC()
	before := rdb.ZRangeWithScores(ctx, key, 0, -1).Val()
	if r, lost := l.renew(ctx); r != 3 || lost != 0 {
		t.Fatalf("renewed %d, lost %d; want 3, 0", r, lost)
	}
	after := rdb.ZRangeWithScores(ctx, key, 0, -1).Val()
	if len(before) != 2 || len(after) != 2 || after[0].Score < before[0].Score {
		t.Fatalf("scores before %v, after %v", before, after)
	}

	relB()
	ids := members(t, rdb, key)
	rdb.ZRem(ctx, key, ids[0]) // the remaining lease, A, vanishes
	if r, lost := l.renew(ctx); r != 1 || lost != 1 {
		t.Fatalf("renewed %d, lost %d; want 1 (other), 1 (A)", r, lost)
	}
	if r, lost := l.renew(ctx); r != 1 || lost != 0 {
		t.Fatalf("again: renewed %d, lost %d; want 1, 0", r, lost)
	}
	if n := rdb.ZCard(ctx, key).Val(); n != 0 {
		t.Fatalf("the lost lease was taken again: %d leases", n)
	}
}

// TestLongIdentityIsHashed: an identity longer than ratelimit.MaxIdentityBytes
// does not make a long key.
func TestLongIdentityIsHashed(t *testing.T) {
	rdb, prefix := sharedRedis(t, 2)
	l, _ := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix})
	long := strings.Repeat("x", 10_000)
	key := l.Key(long)
	if len(key) > len(prefix)+100 || !strings.HasPrefix(key, prefix+"cc:{buyer-concurrency:sha256:") {
		t.Fatalf("key %q", key)
	}
	if l.Key("8812") != prefix+"cc:{buyer-concurrency:8812}" {
		t.Fatalf("key %q", l.Key("8812"))
	}
	d, rel := l.Enter(context.Background(), long)
	defer rel()
	if d2, _ := l.Enter(context.Background(), long); !d.Allowed || d2.Allowed {
		t.Fatalf("long identity: %+v, then %+v", d, d2)
	}
}

// TestMetricsShareARegistry: two limiters on one registry share the
// collectors, each with its own series, all created at 0 by New.
func TestMetricsShareARegistry(t *testing.T) {
	rdb, prefix := sharedRedis(t, 2)
	reg := prometheus.NewRegistry()
	buyers := New(rdb, Options{Name: testBuyer, Max: 5, Prefix: prefix, Registerer: reg, Timeout: 5 * time.Second})
	orgs := New(rdb, Options{Name: testOrganizer, Max: 20, Prefix: prefix, Registerer: reg})
	if n := testutil.CollectAndCount(reg, "stagedoor_concurrency_decisions_total"); n != 2*len(outcomes) {
		t.Fatalf("%d decision series at start, want %d", n, 2*len(outcomes))
	}
	if n := testutil.CollectAndCount(reg, "stagedoor_concurrency_leases"); n != 2 {
		t.Fatalf("%d lease gauges, want 2", n)
	}
	_, rel := buyers.Enter(context.Background(), "8812")
	defer rel()
	want := `
# HELP stagedoor_concurrency_leases Leases this instance holds in Redis for requests in flight, by limit.
# TYPE stagedoor_concurrency_leases gauge
stagedoor_concurrency_leases{limit="buyer-concurrency"} 1
stagedoor_concurrency_leases{limit="organizer-concurrency"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "stagedoor_concurrency_leases"); err != nil {
		t.Fatal(err)
	}
	if orgs.Max() != 20 || orgs.Name() != testOrganizer || orgs.Mode() != ratelimit.Enforce || orgs.Lease() != DefaultLease {
		t.Fatalf("defaults: max %d, name %s, mode %s, lease %s", orgs.Max(), orgs.Name(), orgs.Mode(), orgs.Lease())
	}
}

// TestOptionsValidate: New refuses what cannot work, and SetMode a mode that
// does not exist.
func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Max: 5},
		{Name: testBuyer},
		{Name: testBuyer, Max: 5, Lease: -time.Second},
		{Name: testBuyer, Max: 5, Lease: time.Millisecond},
		{Name: testBuyer, Max: 5, Mode: "loud"},
	} {
		if o.Validate() == nil {
			t.Errorf("%+v: valid", o)
		}
	}
	if err := (Options{Name: testBuyer, Max: 5}).Validate(); err != nil {
		t.Fatal(err)
	}
	l := New(nil, Options{Name: testBuyer, Max: 5})
	defer func() {
		if recover() == nil {
			t.Fatal("SetMode accepted an unknown mode")
		}
	}()
	l.SetMode("loud")
}

// TestAcquireTwiceIsOnce: the acquire script run again with the same lease id
// (a client retrying after a lost reply) takes no second place and answers as
// the first time.
func TestAcquireTwiceIsOnce(t *testing.T) {
	rdb, prefix := sharedRedis(t, 2)
	ctx := context.Background()
	key := prefix + "cc:{buyer-concurrency:8812}"
	for i := range 2 {
		took, before, err := acquire(ctx, rdb, key, "lease-1", 1, 10_000, false)
		if err != nil || !took || before != 0 {
			t.Fatalf("run %d: took %v, before %d, %v", i+1, took, before, err)
		}
	}
	if took, before, _ := acquire(ctx, rdb, key, "lease-2", 1, 10_000, false); took || before != 1 {
		t.Fatalf("another lease: took %v, before %d", took, before)
	}
	if n := rdb.ZCard(ctx, key).Val(); n != 1 {
		t.Fatalf("%d leases, want 1", n)
	}
}
