package shed

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestRealSquareWave runs the worker utilization shedder with its default
// options on the real scheduler: 10 s of 8×GOMAXPROCS goroutines spinning,
// 10 s of nothing, twice. It must reach level 1 or more in each busy phase,
// change level at most 3 times a phase, and be back at 0 within
// 2 × RestoreAfter + 3 s of the last quiet phase's start, or of the last
// sample in it that was not calm (other processes loading the machine). It prints the
// sampled scheduler latencies of each phase. About 40 s: skipped by -short.
// It is not parallel, so the package's other tests wait for it and do not
// disturb the quiet phases.
func TestRealSquareWave(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40 s square wave of real load; skipped by -short")
	}
	const phase = 10 * time.Second
	var logs testenv.LogBuffer
	u := NewUtilization(UtilizationOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})

	type sample struct {
		t time.Time
		s Signals
	}
	var mu sync.Mutex
	var changes []timedChange
	var sampled []sample
	u.onChange = func(from, to int) {
		mu.Lock()
		changes = append(changes, timedChange{time.Now(), from, to})
		mu.Unlock()
	}
	u.onSample = func(s Signals) {
		mu.Lock()
		sampled = append(sampled, sample{time.Now(), s})
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)

	spin := func(d time.Duration) {
		var stop atomic.Bool
		var wg sync.WaitGroup
		for range 8 * runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				x := 0
				for !stop.Load() {
					x++
				}
				_ = x
			})
		}
		time.Sleep(d)
		stop.Store(true)
		wg.Wait()
	}

	var bounds []time.Time // the start of each phase, and the end
	for range 2 {
		bounds = append(bounds, time.Now())
		spin(phase)
		bounds = append(bounds, time.Now())
		if len(bounds) < 4 {
			time.Sleep(phase)
		}
	}
	// Restoring is judged from the last moment the machine was busy, by the
	// shedder's own measure: other processes (the other packages of
	// go test ./..., a browser) may load it in the quiet phase, and then
	// staying up is right. A machine that never calms for long enough
	// within a minute cannot judge restoring at all.
	lastQuiet := bounds[3]
	calmSince := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		since := lastQuiet
		for _, s := range sampled {
			if s.t.After(since) && !u.isCalm(s.s) {
				since = s.t
			}
		}
		return since
	}
	giveUp := lastQuiet.Add(time.Minute)
	var deadline time.Time
	for {
		deadline = calmSince().Add(2*DefaultRestoreAfter + 3*time.Second)
		if u.Level() == LevelNone || time.Now().After(deadline) || time.Now().After(giveUp) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	restored := time.Since(lastQuiet)
	busyAfterQuiet := deadline.After(giveUp) && u.Level() != LevelNone
	bounds = append(bounds, time.Now())
	cancel()

	mu.Lock()
	defer mu.Unlock()
	names := []string{"busy 1", "quiet 1", "busy 2", "quiet 2"}
	for p := range 4 {
		from, to := bounds[p], bounds[p+1]
		var n int
		var seen []int
		level := levelAt(changes, from)
		peak := level
		for _, c := range changes {
			if !c.t.Before(from) && c.t.Before(to) {
				n++
				seen = append(seen, c.to)
				peak = max(peak, c.to)
			}
		}
		var sched, lag []time.Duration
		for _, s := range sampled {
			if !s.t.Before(from) && s.t.Before(to) {
				if p%2 == 1 && !u.isCalm(s.s) {
					t.Logf("  not calm at +%s: %+v", s.t.Sub(from).Round(time.Millisecond), s.s)
				}
				sched = append(sched, s.s.SchedP99)
				lag = append(lag, s.s.SamplerLag)
			}
		}
		t.Logf("%s (%s): level %d at its start, then %v; scheduler p99 %s, sampler lag %s",
			names[p], to.Sub(from).Round(100*time.Millisecond), level, seen, spread(sched), spread(lag))
		if p%2 == 0 && peak < LevelSheddable {
			t.Errorf("%s: the level never reached 1", names[p])
		}
		if n > 3 {
			t.Errorf("%s: %d changes of level; want at most 3", names[p], n)
		}
	}
	switch {
	case busyAfterQuiet:
		t.Logf("the machine was busy until %s after the last quiet phase began (other processes): too late to judge restoring",
			deadline.Add(-2*DefaultRestoreAfter-3*time.Second).Sub(lastQuiet).Round(100*time.Millisecond))
	case u.Level() != LevelNone:
		t.Errorf("level %d %s after the last quiet phase began; want 0 within %s", u.Level(),
			restored.Round(100*time.Millisecond), 2*DefaultRestoreAfter+3*time.Second)
	default:
		t.Logf("back at level 0 %s after the last quiet phase began", restored.Round(100*time.Millisecond))
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}

// timedChange is a change of level and when it happened.
type timedChange struct {
	t        time.Time
	from, to int
}

// levelAt is the level at t, from the changes.
func levelAt(changes []timedChange, t time.Time) int {
	level := LevelNone
	for _, c := range changes {
		if c.t.Before(t) {
			level = c.to
		}
	}
	return level
}

// spread is the min, median and max of ds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "(no samples)"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return "min " + s[0].String() + ", median " + s[len(s)/2].String() + ", max " + s[len(s)-1].String()
}
