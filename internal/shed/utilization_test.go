package shed

import (
	"context"
	"log/slog"
	"math"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// Samples of each kind, against the default thresholds.
var (
	overloadedSample = Signals{SchedP99: 40 * time.Millisecond, SamplerLag: 30 * time.Millisecond}
	calmSample       = Signals{SchedP99: 50 * time.Microsecond, SamplerLag: 600 * time.Microsecond}
	betweenSample    = Signals{SchedP99: 6 * time.Millisecond} // neither overloaded nor calm
)

// change is one change of level, at the n-th sample (0-based).
type change struct{ n, from, to int }

// levelRecorder feeds samples to u and records its changes of level.
type levelRecorder struct {
	u       *Utilization
	n       int
	changes []change
}

func newLevelRecorder(u *Utilization) *levelRecorder {
	r := &levelRecorder{u: u}
	u.onChange = func(from, to int) { r.changes = append(r.changes, change{r.n, from, to}) }
	return r
}

func (r *levelRecorder) feed(s Signals, k int) {
	for range k {
		r.u.observe(s)
		r.n++
	}
}

// TestLevelSquareWave feeds the default shedder (4 samples to escalate, 20 to
// restore) a square wave of 10 s overloaded, 10 s calm, twice, each phase with
// one sample of the other kind in it, then calm. The level climbs one step
// every 4 overloaded samples, falls one step every 20 calm ones, and the
// noisy samples change nothing but the runs they break: 6 changes in all,
// never more than 2 a phase, never a reversal within a run.
func TestLevelSquareWave(t *testing.T) {
	t.Parallel()
	var logs testenv.LogBuffer
	u := NewUtilization(UtilizationOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	r := newLevelRecorder(u)
	for range 2 {
		r.feed(overloadedSample, 20) // on: 40 samples, the 21st calm
		r.feed(calmSample, 1)
		r.feed(overloadedSample, 19)
		r.feed(calmSample, 10) // off: 40 samples, the 11th overloaded
		r.feed(overloadedSample, 1)
		r.feed(calmSample, 29)
	}
	r.feed(calmSample, 40)
	want := []change{{3, 0, 1}, {7, 1, 2}, {70, 2, 1}, {83, 1, 2}, {150, 2, 1}, {170, 1, 0}}
	if !equalChanges(r.changes, want) {
		t.Fatalf("changes of level (sample, from, to) = %v; want %v", r.changes, want)
	}
	if u.Level() != LevelNone {
		t.Fatalf("level %d after the load ended; want 0", u.Level())
	}
	var warns, infos int
	for _, l := range logs.Lines(t) {
		switch l["level"] {
		case "WARN":
			warns++
			if l["overloaded"] != "sched" || l["sched_p99"] != "40ms" {
				t.Errorf("escalation logged as %v; want the overloaded signal and its value", l)
			}
		case "INFO":
			infos++
		}
	}
	if warns != 3 || infos != 3 {
		t.Errorf("%d WARN and %d INFO lines; want one a change: 3 and 3\n%s", warns, infos, logs.String())
	}
}

func equalChanges(a, b []change) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLevelNeedsRuns: an overload interrupted every fourth sample by one
// between the thresholds never escalates; each signal escalates on its own;
// samples between the thresholds pause the wait for calm (restoring takes 20
// calm samples however many come between), and an overloaded sample starts
// it over.
func TestLevelNeedsRuns(t *testing.T) {
	t.Parallel()
	u := NewUtilization(UtilizationOptions{})
	r := newLevelRecorder(u)
	for range 30 {
		r.feed(overloadedSample, 3)
		r.feed(betweenSample, 1)
	}
	if len(r.changes) != 0 {
		t.Fatalf("runs of 3 overloaded samples changed the level: %v", r.changes)
	}
	between := Signals{PoolWait: 20 * time.Millisecond, InFlightRatio: 0.6, SamplerLag: 5 * time.Millisecond}
	for name, s := range map[string]Signals{
		"sampler lag": {SamplerLag: 11 * time.Millisecond},
		"pool wait":   {PoolWait: 60 * time.Millisecond},
		"in flight":   {InFlightRatio: 0.85},
	} {
		u := NewUtilization(UtilizationOptions{})
		r := newLevelRecorder(u)
		r.feed(s, 4) // escalates at sample 3
		for range 19 {
			r.feed(calmSample, 1)
			r.feed(between, 1)
		}
		r.feed(calmSample, 1) // the 20th calm sample: restores at sample 42
		r.feed(s, 4)          // escalates at 46
		r.feed(calmSample, 19)
		r.feed(s, 1) // starts the wait over
		r.feed(calmSample, 19)
		r.feed(calmSample, 1) // the 20th since: restores at 86
		want := []change{{3, 0, 1}, {42, 1, 0}, {46, 0, 1}, {86, 1, 0}}
		if !equalChanges(r.changes, want) {
			t.Errorf("%s: changes %v; want %v", name, r.changes, want)
		}
	}
}

// TestQuantile reads the p99 of the difference of two readings of a
// histogram, as the upper bound of its bucket.
func TestQuantile(t *testing.T) {
	t.Parallel()
	h := &metrics.Float64Histogram{Buckets: []float64{0, 1e-3, 1e-2, math.Inf(1)}, Counts: []uint64{108, 3, 1}}
	for _, c := range []struct {
		prev []uint64
		want time.Duration
	}{
		{[]uint64{10, 2, 1}, 10 * time.Millisecond},  // 98, 1, 0 more: the 99th is in (1 ms, 10 ms]
		{[]uint64{8, 3, 1}, time.Millisecond},        // 100, 0, 0
		{[]uint64{108, 3, 0}, 10 * time.Millisecond}, // one event beyond 10 ms: the lower bound
		{[]uint64{108, 3, 1}, 0},                     // none
	} {
		if got := quantile(c.prev, h, 0.99); got != c.want {
			t.Errorf("p99 beyond %v = %s; want %s", c.prev, got, c.want)
		}
	}
	if got := median3([3]time.Duration{20, 1, 3}); got != 3 {
		t.Errorf("median3(20, 1, 3) = %d", got)
	}
}

// TestAdmitByLevel: level 1 refuses sheddable, level 2 normal too; critical
// and exempt are never refused, and exempt is not counted.
func TestAdmitByLevel(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	u := NewUtilization(UtilizationOptions{Registerer: reg})
	want := map[int]map[Class]bool{
		LevelNone:      {Exempt: true, Critical: true, Normal: true, Sheddable: true},
		LevelSheddable: {Exempt: true, Critical: true, Normal: true, Sheddable: false},
		LevelNormal:    {Exempt: true, Critical: true, Normal: false, Sheddable: false},
	}
	for level := LevelNone; level <= LevelNormal; level++ {
		u.setLevel(u.Level(), level)
		for c, allowed := range want[level] {
			d := u.Admit(c)
			if d.Allowed != allowed || d.Shedder != WorkerUtilization {
				t.Errorf("level %d, %s: %+v; want allowed %v", level, c, d, allowed)
			}
			if !allowed && (d.Outcome != OutcomeShed || d.RetryAfter != DefaultRestoreAfter || !strings.Contains(d.Reason, "overloaded")) {
				t.Errorf("level %d, %s refused as %+v", level, c, d)
			}
		}
	}
	if n := testutil.ToFloat64(u.counts[Sheddable][iShed]); n != 2 {
		t.Errorf("%v sheddable requests counted shed; want 2", n)
	}
	if n := testutil.CollectAndCount(reg, "stagedoor_shed_decisions_total"); n != 3*numOutcomes {
		t.Errorf("%d decision series; want every class × decision at 0 from the start: %d", n, 3*numOutcomes)
	}
}

// TestUtilizationModes: Shadow changes levels and counts shadow_shed but
// refuses nothing; Off admits everything as off and holds the level at 0
// whatever the samples; back in Enforce, it escalates again.
func TestUtilizationModes(t *testing.T) {
	t.Parallel()
	u := NewUtilization(UtilizationOptions{Mode: ratelimit.Shadow})
	r := newLevelRecorder(u)
	r.feed(overloadedSample, 8)
	if u.Level() != LevelNormal {
		t.Fatalf("shadow: level %d after 8 overloaded samples; want 2", u.Level())
	}
	for _, c := range Classes {
		d := u.Admit(c)
		want := OutcomeShadowShed
		if c == Critical {
			want = OutcomeAllowed
		}
		if !d.Allowed || d.Outcome != want {
			t.Errorf("shadow, %s: %+v; want allowed, %s", c, d, want)
		}
	}
	if n := testutil.ToFloat64(u.counts[Normal][iShadowShed]); n != 1 {
		t.Errorf("%v normal requests counted shadow_shed; want 1", n)
	}

	u.SetMode(ratelimit.Off)
	r.feed(overloadedSample, 40)
	if u.Level() != LevelNone || u.Mode() != ratelimit.Off {
		t.Fatalf("off: level %d, mode %s; want 0, off", u.Level(), u.Mode())
	}
	for _, c := range Classes {
		if d := u.Admit(c); !d.Allowed || d.Outcome != OutcomeOff {
			t.Errorf("off, %s: %+v; want allowed, off", c, d)
		}
	}
	u.SetMode(ratelimit.Enforce)
	r.feed(overloadedSample, 4)
	if d := u.Admit(Sheddable); d.Allowed || u.Level() != LevelSheddable {
		t.Errorf("enforce again: level %d, sheddable %+v; want level 1, refused", u.Level(), d)
	}
}

// TestPoolWaitEscalates: a real PostgreSQL pool of 2 connections, asked by 20
// goroutines at once for 50 ms queries: the average wait of an acquire that
// waited (pgxpool's EmptyAcquireCount and EmptyAcquireWaitTime, as the
// program feeds them) is far above 50 ms, and the shedder reaches level 2 in
// about 2 s from the real signal.
func TestPoolWaitEscalates(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	u := NewUtilization(UtilizationOptions{PoolWait: func() (int64, time.Duration) {
		st := pool.Stat()
		return st.EmptyAcquireCount(), st.EmptyAcquireWaitTime()
	}})
	var maxWait atomic.Int64
	u.onSample = func(s Signals) { maxWait.Store(max(maxWait.Load(), int64(s.PoolWait))) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)

	var wg sync.WaitGroup
	load, stop := context.WithCancel(ctx)
	for range 20 {
		wg.Go(func() {
			for load.Err() == nil {
				_, _ = pool.Exec(load, "SELECT pg_sleep(0.05)")
			}
		})
	}
	reached := testenv.Eventually(t, 5*time.Second, func() bool { return u.Level() >= LevelNormal }, "level 2 after an exhausted pool")
	stop()
	wg.Wait()
	t.Logf("level %d after %s; the largest average pool wait sampled: %s", u.Level(), reached.Round(time.Millisecond), time.Duration(maxWait.Load()))
	if u.Level() != LevelNormal {
		t.Fatalf("level %d after 5 s of an exhausted pool; want 2", u.Level())
	}
}
