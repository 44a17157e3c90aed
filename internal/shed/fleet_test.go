package shed

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// tally counts the decisions of one class, across instances.
type tally struct {
	offered, admitted       atomic.Int64
	outcomes                [numOutcomes]atomic.Int64
	mu                      sync.Mutex
	lastReason, lastShedder string
	lastRetryAfter          time.Duration
}

func (t *tally) add(d Decision) {
	t.offered.Add(1)
	if d.Allowed {
		t.admitted.Add(1)
	}
	for i, o := range outcomes {
		if o == d.Outcome {
			t.outcomes[i].Add(1)
		}
	}
	if d.Outcome == OutcomeShed || d.Outcome == OutcomeShadowShed {
		t.mu.Lock()
		t.lastReason, t.lastShedder, t.lastRetryAfter = d.Reason, string(d.Shedder), d.RetryAfter
		t.mu.Unlock()
	}
}

// load is what a test offers: each Fleet gets rate[c] requests a second of
// each class c, paced by elapsed time (the requests owed are made up after
// each 2 ms sleep), so the offered rate is exact on average whatever the
// timer's slack.
type load struct {
	tallies [numClasses]*tally
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func offer(fleets []*Fleet, rate map[Class]float64) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel}
	for _, c := range Classes {
		l.tallies[c] = &tally{}
	}
	for _, f := range fleets {
		for c, r := range rate {
			l.wg.Go(func() {
				start, sent := time.Now(), 0
				for ctx.Err() == nil {
					for due := int(r * time.Since(start).Seconds()); sent < due; sent++ {
						l.tallies[c].add(f.Admit(c))
					}
					time.Sleep(2 * time.Millisecond)
				}
			})
		}
	}
	return l
}

func (l *load) stop() { l.cancel(); l.wg.Wait() }

// rates are the offered and admitted rates of each class over a span.
type rates struct{ offered, admitted [numClasses]float64 }

// measure waits warm, then returns the rates over the span that follows.
func (l *load) measure(warm, span time.Duration) rates {
	time.Sleep(warm)
	var o0, a0 [numClasses]int64
	for _, c := range Classes {
		o0[c], a0[c] = l.tallies[c].offered.Load(), l.tallies[c].admitted.Load()
	}
	began := time.Now()
	time.Sleep(span)
	secs := time.Since(began).Seconds()
	var r rates
	for _, c := range Classes {
		r.offered[c] = float64(l.tallies[c].offered.Load()-o0[c]) / secs
		r.admitted[c] = float64(l.tallies[c].admitted.Load()-a0[c]) / secs
	}
	return r
}

// startFleets makes n Fleets on rdb sharing one key space, running until the
// test ends.
func startFleets(t *testing.T, n int, rdb redis.UniversalClient, o FleetOptions) []*Fleet {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var fleets []*Fleet
	for range n {
		f := NewFleet(rdb, o)
		wg.Go(func() { f.Run(ctx) })
		fleets = append(fleets, f)
	}
	return fleets
}

func within(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance*want }

// TestFleetHoldsSheddableToItsShare: three instances of a fleet of capacity
// 1000 req/s are offered 3000 sheddable req/s between them, and 150 critical.
// Once the estimate has a second of history (1.5 s), the fleet admits
// (1 − 0.2) × 1000 = 800 sheddable req/s ± 15 % over 3 s, and every critical
// request. Each instance's estimate of the fleet's sheddable rate is within
// 10 % of 3000.
func TestFleetHoldsSheddableToItsShare(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	fleets := startFleets(t, 3, rdb, FleetOptions{Capacity: 1000, Prefix: prefix, Timeout: time.Second})
	l := offer(fleets, map[Class]float64{Sheddable: 1000, Critical: 50})
	r := l.measure(1500*time.Millisecond, 3*time.Second)
	est := fleets[0].rate[Sheddable]
	l.stop()
	t.Logf("offered %.0f sheddable and %.0f critical req/s; admitted %.0f and %.0f; estimated sheddable %.0f req/s",
		r.offered[Sheddable], r.offered[Critical], r.admitted[Sheddable], r.admitted[Critical], testutil.ToFloat64(est))
	if !within(r.admitted[Sheddable], 800, 0.15) {
		t.Errorf("the fleet admitted %.0f sheddable req/s; want 800 ± 15 %%", r.admitted[Sheddable])
	}
	ct := l.tallies[Critical]
	if ct.admitted.Load() != ct.offered.Load() || ct.offered.Load() == 0 {
		t.Errorf("%d of %d critical requests admitted; want all", ct.admitted.Load(), ct.offered.Load())
	}
	for i, f := range fleets {
		if e := testutil.ToFloat64(f.rate[Sheddable]); !within(e, 3000, 0.10) {
			t.Errorf("instance %d estimates the fleet's sheddable rate at %.0f req/s; want 3000 ± 10 %%", i, e)
		}
	}
	st := l.tallies[Sheddable]
	if st.lastShedder != string(FleetUsage) || st.lastRetryAfter != FleetRetryAfter ||
		!strings.Contains(st.lastReason, "the fleet's sheddable traffic") || !strings.Contains(st.lastReason, "capacity of 1000 req/s") {
		t.Errorf("a refusal said %s, %s, %q", st.lastShedder, st.lastRetryAfter, st.lastReason)
	}
}

// TestFleetNormalBeforeSheddable: 600 normal req/s and 2000 sheddable
// between three instances, capacity 1000: every normal request is admitted
// and sheddable gets what normal leaves of the 800: 200 req/s ± 15 %.
func TestFleetNormalBeforeSheddable(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	fleets := startFleets(t, 3, rdb, FleetOptions{Capacity: 1000, Prefix: prefix, Timeout: time.Second})
	l := offer(fleets, map[Class]float64{Normal: 200, Sheddable: 2000.0 / 3})
	r := l.measure(1500*time.Millisecond, 3*time.Second)
	l.stop()
	t.Logf("offered %.0f normal and %.0f sheddable req/s; admitted %.0f and %.0f",
		r.offered[Normal], r.offered[Sheddable], r.admitted[Normal], r.admitted[Sheddable])
	if nt := l.tallies[Normal]; nt.admitted.Load() != nt.offered.Load() {
		t.Errorf("%d of %d normal requests admitted; want all", nt.admitted.Load(), nt.offered.Load())
	}
	if !within(r.admitted[Sheddable], 200, 0.15) {
		t.Errorf("the fleet admitted %.0f sheddable req/s; want 200 ± 15 %%", r.admitted[Sheddable])
	}
}

// TestFleetUnderCapacity: 300 normal, 300 sheddable and 150 critical req/s
// between three instances, below the 800 of the share: nothing is shed, from
// the first request on, and the estimates are within 10 % of the truth.
func TestFleetUnderCapacity(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	fleets := startFleets(t, 3, rdb, FleetOptions{Capacity: 1000, Prefix: prefix, Timeout: time.Second})
	l := offer(fleets, map[Class]float64{Normal: 100, Sheddable: 100, Critical: 50})
	r := l.measure(1500*time.Millisecond, time.Second)
	l.stop()
	for _, c := range Classes {
		if tl := l.tallies[c]; tl.admitted.Load() != tl.offered.Load() {
			t.Errorf("%s: %d of %d admitted; want all", c, tl.admitted.Load(), tl.offered.Load())
		}
		e := testutil.ToFloat64(fleets[1].rate[c])
		t.Logf("%s: offered %.0f req/s, estimated %.0f", c, r.offered[c], e)
		if !within(e, r.offered[c], 0.10) {
			t.Errorf("%s: estimated %.0f req/s; offered %.0f", c, e, r.offered[c])
		}
	}
}

// TestFleetFailsOpen: a fleet on a Redis of its own sheds; the Redis is
// killed; from then on every request is admitted as fail_open, the gauge says
// so, and the failing open is logged once however long it lasts.
func TestFleetFailsOpen(t *testing.T) {
	t.Parallel()
	srv := testenv.StartPrivateRedis(t)
	opts, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	var logs testenv.LogBuffer
	reg := prometheus.NewRegistry()
	fleets := startFleets(t, 1, rdb, FleetOptions{Capacity: 100, Timeout: 200 * time.Millisecond,
		Registerer: reg, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	f := fleets[0]

	l := offer(fleets, map[Class]float64{Sheddable: 500})
	testenv.Eventually(t, 1500*time.Millisecond, func() bool {
		return l.tallies[Sheddable].outcomes[iShed].Load() > 0
	}, "a request shed before Redis went away")
	l.stop()

	srv.Stop()
	testenv.Eventually(t, 500*time.Millisecond, func() bool {
		return f.state.Load().failOpen
	}, "the fleet failing open once Redis is gone")
	l = offer(fleets, map[Class]float64{Sheddable: 500, Normal: 500, Critical: 100})
	time.Sleep(1500 * time.Millisecond)
	l.stop()
	for _, c := range Classes {
		tl := l.tallies[c]
		if tl.admitted.Load() != tl.offered.Load() || tl.outcomes[iFailOpen].Load() != tl.offered.Load() {
			t.Errorf("%s with Redis down: %d offered, %d admitted, %d fail_open; want all admitted as fail_open",
				c, tl.offered.Load(), tl.admitted.Load(), tl.outcomes[iFailOpen].Load())
		}
	}
	if v := testutil.ToFloat64(f.failOpen); v != 1 {
		t.Errorf("stagedoor_fleet_usage_fail_open = %v; want 1", v)
	}
	var failing int
	for _, line := range logs.Lines(t) {
		if strings.HasPrefix(line["msg"].(string), "load shedder failing open") {
			failing++
		}
	}
	if failing != 1 {
		t.Errorf("%d lines say the shedder fails open; want 1\n%s", failing, logs.String())
	}
}

// keys are the keys under prefix.
func keys(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ks, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestFleetModes: Off admits everything as off and never calls Redis; so does
// a capacity of 0. Shadow refuses nothing and counts shadow_shed; back in
// Enforce it sheds.
func TestFleetModes(t *testing.T) {
	t.Parallel()
	shared, prefix := testenv.Redis(t)
	rdb := testenv.CountScripts(shared)
	reg := prometheus.NewRegistry()
	f := startFleets(t, 1, rdb, FleetOptions{Capacity: 100, Prefix: prefix, Mode: ratelimit.Off, Registerer: reg})[0]
	idle := startFleets(t, 1, rdb, FleetOptions{Prefix: prefix})[0] // capacity 0

	l := offer([]*Fleet{f, idle}, map[Class]float64{Sheddable: 500, Critical: 50})
	time.Sleep(time.Second)
	l.stop()
	st := l.tallies[Sheddable]
	if st.admitted.Load() != st.offered.Load() || rdb.Calls() != 0 || len(keys(t, shared, prefix)) != 0 {
		t.Fatalf("off and capacity 0: %d of %d admitted, %d Redis calls, keys %v; want all admitted, none, none",
			st.admitted.Load(), st.offered.Load(), rdb.Calls(), keys(t, shared, prefix))
	}
	if off, allowed := st.outcomes[iOff].Load(), st.outcomes[iAllowed].Load(); off == 0 || allowed == 0 || off+allowed != st.offered.Load() {
		t.Errorf("off: %d off and %d allowed (capacity 0) of %d", off, allowed, st.offered.Load())
	}

	f.SetMode(ratelimit.Shadow)
	l = offer([]*Fleet{f}, map[Class]float64{Sheddable: 500})
	testenv.Eventually(t, 2*time.Second, func() bool {
		return l.tallies[Sheddable].outcomes[iShadowShed].Load() > 0
	}, "a shadow_shed decision")
	l.stop()
	st = l.tallies[Sheddable]
	shadow := testutil.ToFloat64(f.counts[Sheddable][iShadowShed])
	t.Logf("shadow: %d offered, %d shadow_shed (counted %v)", st.offered.Load(), st.outcomes[iShadowShed].Load(), shadow)
	if st.admitted.Load() != st.offered.Load() || st.outcomes[iShadowShed].Load() == 0 || shadow != float64(st.outcomes[iShadowShed].Load()) {
		t.Errorf("shadow: %d of %d admitted, %d shadow_shed; want all admitted, some shadow_shed", st.admitted.Load(), st.offered.Load(), st.outcomes[iShadowShed].Load())
	}
	if rdb.Calls() == 0 || len(keys(t, shared, prefix)) != 1 {
		t.Errorf("shadow: %d Redis calls, keys %v; want calls, one key", rdb.Calls(), keys(t, shared, prefix))
	}

	f.SetMode(ratelimit.Enforce)
	l = offer([]*Fleet{f}, map[Class]float64{Sheddable: 500})
	testenv.Eventually(t, time.Second, func() bool {
		return l.tallies[Sheddable].outcomes[iShed].Load() > 0
	}, "a request shed in enforce again")
	l.stop()
	if n := testutil.CollectAndCount(reg, "stagedoor_shed_decisions_total"); n != 3*numOutcomes {
		t.Errorf("%d decision series; want every class × decision: %d", n, 3*numOutcomes)
	}
}

// TestPlan checks the budgets' arithmetic.
func TestPlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		rate      [numClasses]float64
		wantAdmit [numClasses]float64
	}{
		{"idle", [numClasses]float64{}, [numClasses]float64{1, 1, 1, 1}},
		{"under the share", [numClasses]float64{0, 100, 300, 400}, [numClasses]float64{1, 1, 1, 1}},
		{"sheddable over", [numClasses]float64{0, 100, 0, 3000}, [numClasses]float64{1, 1, 1, 800.0 / 3000}},
		{"normal first", [numClasses]float64{0, 0, 600, 2000}, [numClasses]float64{1, 1, 1, 200.0 / 2000}},
		{"normal over", [numClasses]float64{0, 0, 1600, 500}, [numClasses]float64{1, 1, 0.5, 0}},
		{"critical over its reserve", [numClasses]float64{0, 500, 1000, 10}, [numClasses]float64{1, 1, 0.5, 0}},
		{"critical over capacity", [numClasses]float64{0, 1500, 10, 10}, [numClasses]float64{1, 1, 0, 0}},
	} {
		admit, _ := plan(1000, 0.2, c.rate)
		for _, k := range Classes {
			if math.Abs(admit[k]-c.wantAdmit[k]) > 1e-9 {
				t.Errorf("%s: admit %v; want %v", c.name, admit, c.wantAdmit)
				break
			}
		}
	}
}

// TestOwnRate: an instance's rate is right from its first flush, then
// over the last second; a flush of nothing lowers it.
func TestOwnRate(t *testing.T) {
	t.Parallel()
	f := NewFleet(nil, FleetOptions{Capacity: 1})
	t0 := time.Now()
	f.reset(t0)
	for i := 1; i <= 15; i++ {
		r := f.ownRate(t0.Add(time.Duration(i)*100*time.Millisecond), [numClasses]int64{Sheddable: 100, Normal: int64(i)})
		wantNormal := float64(i*(i+1)/2) / (float64(i) / 10) // 1 + 2 + … + i over i/10 s
		if i > 10 {
			wantNormal = float64((i-9+i)*10/2) / 1 // the last ten: i−9 … i
		}
		if math.Abs(r[Sheddable]-1000) > 1e-6 || math.Abs(r[Normal]-wantNormal) > 1e-6 || len(f.own) > 10 {
			t.Fatalf("flush %d: %v from %d flushes; want sheddable 1000, normal %.1f", i, r, len(f.own), wantNormal)
		}
	}
	r := f.ownRate(t0.Add(1600*time.Millisecond), [numClasses]int64{})
	if math.Abs(r[Sheddable]-900) > 1e-6 {
		t.Errorf("after a flush of nothing: %v; want sheddable 900", r)
	}
}
