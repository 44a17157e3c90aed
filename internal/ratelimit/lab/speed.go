package lab

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// SpeedConfig is experiment 2: the time of one decision, one caller at a time,
// and the decisions a second from many goroutines, of every algorithm beside a
// raw INCR.
type SpeedConfig struct {
	// Limit is 100/1s; with Users keys few requests are refused.
	Limit Limit
	// Calls is the decisions timed per algorithm, one at a time (the lab timed
	// 20,000; 10,000 keep the lab within two minutes), in Rounds rounds that take the algorithms in turn, so that the machine's
	// other work weighs on them all alike.
	Calls, Rounds int
	// Goroutines (50) call each algorithm for Duration to count its decisions a second.
	Goroutines int
	Duration   time.Duration
	// Users is how many keys the calls are spread over.
	Users int
}

// DefaultSpeed is the full experiment; QuickSpeed a short one.
func DefaultSpeed() SpeedConfig {
	return SpeedConfig{Limit: Limit{N: 100, Window: time.Second}, Calls: 10000, Rounds: 10,
		Goroutines: 50, Duration: time.Second, Users: 10000}
}

// QuickSpeed is a short version of DefaultSpeed.
func QuickSpeed() SpeedConfig {
	c := DefaultSpeed()
	c.Calls, c.Rounds, c.Duration = 1000, 2, 200*time.Millisecond
	return c
}

// SpeedRow is one algorithm's speed. The ratios are to the raw INCR's.
type SpeedRow struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	PerSecond  float64 `json:"decisions_per_second"`
	P50Ratio   float64 `json:"p50_vs_incr"`
	P99Ratio   float64 `json:"p99_vs_incr"`
	RateRatio  float64 `json:"throughput_vs_incr"`
	AllowedPct float64 `json:"allowed_percent"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

// SpeedResult is experiment 2's outcome; Rows[0] is the raw INCR.
type SpeedResult struct {
	Limit      string     `json:"limit"`
	Calls      int        `json:"timed_calls_per_algorithm"`
	Goroutines int        `json:"goroutines"`
	DurationS  float64    `json:"throughput_seconds_per_algorithm"`
	Rows       []SpeedRow `json:"rows"`
}

// RunSpeed runs experiment 2.
func RunSpeed(ctx context.Context, env Env, algs []Algorithm, cfg SpeedConfig) (*SpeedResult, error) {
	type entry struct {
		row *SpeedRow
		lim Limiter
	}
	entries := []entry{{row: &SpeedRow{ID: "incr", Name: "raw INCR (no limiter)"}, lim: rawIncr{rdb: env.RDB, prefix: env.Prefix + "speed:incr:"}}}
	for _, a := range algs {
		lim, err := a.New(env.RDB, env.Prefix+a.ID+":speed:", cfg.Limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		entries = append(entries, entry{row: &SpeedRow{ID: a.ID, Name: a.Name}, lim: lim})
	}
	key := func(i int) string { return "u" + strconv.Itoa(i%cfg.Users) }

	// Latency: one call at a time, the algorithms in turn round by round.
	lat := make([][]time.Duration, len(entries))
	allowed := make([]int, len(entries))
	perRound := max(1, cfg.Calls/max(1, cfg.Rounds))
	next := 0
	for range max(1, cfg.Rounds) {
		for k, e := range entries {
			for i := range perRound {
				t0 := time.Now()
				ok, err := e.lim.Allow(ctx, key(next+i))
				d := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					recordErr(e.row, err)
					continue
				}
				lat[k] = append(lat[k], d)
				if ok {
					allowed[k]++
				}
			}
		}
		next += perRound
	}
	// Throughput: Goroutines callers for Duration each.
	for _, e := range entries {
		n, errs, first := throughput(ctx, e.lim, cfg, key)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e.row.PerSecond = float64(n) / cfg.Duration.Seconds()
		e.row.Errors += errs
		if first != nil && e.row.FirstError == "" {
			e.row.FirstError = first.Error()
		}
	}
	res := &SpeedResult{Limit: cfg.Limit.String(), Calls: perRound * max(1, cfg.Rounds), Goroutines: cfg.Goroutines, DurationS: cfg.Duration.Seconds()}
	for k, e := range entries {
		e.row.P50Ms, e.row.P99Ms = percentile(lat[k], 0.50), percentile(lat[k], 0.99)
		if len(lat[k]) > 0 {
			e.row.AllowedPct = 100 * float64(allowed[k]) / float64(len(lat[k]))
		}
		base := entries[0].row
		e.row.P50Ratio, e.row.P99Ratio, e.row.RateRatio = e.row.P50Ms/base.P50Ms, e.row.P99Ms/base.P99Ms, e.row.PerSecond/base.PerSecond
		res.Rows = append(res.Rows, *e.row)
	}
	return res, nil
}

func recordErr(row *SpeedRow, err error) {
	row.Errors++
	if row.FirstError == "" {
		row.FirstError = err.Error()
	}
}

// throughput counts lim's decisions by cfg.Goroutines callers in cfg.Duration.
// The callers stop at a flag, not a deadline: a call cut short by a deadline
// would be no decision, and Stagedoor's limiter would count it a failure.
func throughput(ctx context.Context, lim Limiter, cfg SpeedConfig, key func(int) string) (n, errs int64, first error) {
	var stop atomic.Bool
	timer := time.AfterFunc(cfg.Duration, func() { stop.Store(true) })
	defer timer.Stop()
	var count, failed atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for g := range cfg.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g * 7919; !stop.Load() && ctx.Err() == nil; i++ {
				_, err := lim.Allow(ctx, key(i))
				switch {
				case err == nil:
					count.Add(1)
				case ctx.Err() == nil:
					failed.Add(1)
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return count.Load(), failed.Load(), first
}

// percentile is the p-th quantile of ds (nearest rank), in ms; NaN when empty.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return ms(s[max(0, min(i, len(s)-1))])
}

// report is experiment 2's table.
func (r *SpeedResult) report() *table {
	t := &table{title: fmt.Sprintf("2. Speed: %s calls one at a time (p50, p99), then %d goroutines for %.1f s each (decisions/s), limit %s",
		thousands(int64(r.Calls)), r.Goroutines, r.DurationS, r.Limit),
		header: []string{"algorithm", "p50 ms", "p99 ms", "p50 ×INCR", "p99 ×INCR", "decisions/s", "×INCR", "lab p50 ms"}}
	for _, row := range r.Rows {
		lab := "—"
		switch row.ID {
		case "incr":
			lab = fixed(LabBaselineP50Ms, 3) + " (empty GET)"
		case "fixed", "log", "counter", "bucket":
			lab = "~" + fixed(LabP50Ms, 2)
		}
		name := row.Name
		if row.Errors > 0 {
			name += fmt.Sprintf(" (%d errors: %s)", row.Errors, row.FirstError)
		}
		t.add(name, fixed(row.P50Ms, 3), fixed(row.P99Ms, 3), fixed(row.P50Ratio, 2), fixed(row.P99Ratio, 2),
			thousands(int64(math.Round(row.PerSecond))), fixed(row.RateRatio, 2), lab)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	addLo, addHi := math.Inf(1), math.Inf(-1)
	base := r.Rows[0]
	for _, row := range r.Rows {
		switch row.ID {
		case "fixed", "log", "counter", "bucket":
			lo, hi = math.Min(lo, row.P50Ratio), math.Max(hi, row.P50Ratio)
			add := 1000 * (row.P50Ms - base.P50Ms)
			addLo, addHi = math.Min(addLo, add), math.Max(addHi, add)
		}
	}
	t.note("The four scripts' p50 is %s–%s× a bare INCR's, %s–%s µs more: a decision costs one round trip to Redis, and the script's arithmetic is a few µs of it. Choosing among them by speed is choosing nothing; the lab said the same (all ~0.08 ms).",
		fixed(lo, 2), fixed(hi, 2), fixed(addLo, 0), fixed(addHi, 0))
	t.note("The lab timed its HTTP service, beside an empty GET (0.073 ms, no Redis at all); this run calls Redis directly over loopback, so its figures are smaller, and the few µs a script adds weigh more against a bare INCR than against a whole HTTP request.")
	t.note("Decisions a second are bounded by Redis's one thread and this machine's two cores, which the client's goroutines share with Redis and with whatever else runs: on a shared machine they move by a third from run to run, more than they differ between algorithms.")
	if row, ok := speedRow(r, "stagedoor"); ok {
		t.note("Stagedoor's limiter: p50 %s× INCR, in line with the scripts, and %s× INCR's decisions a second. Its Go side (all-or-nothing over a request's buckets, a deadline and breaker per node, metrics) costs little next to the round trip.",
			fixed(row.P50Ratio, 2), fixed(row.RateRatio, 2))
	}
	return t
}

func speedRow(r *SpeedResult, id string) (SpeedRow, bool) {
	for _, row := range r.Rows {
		if row.ID == id {
			return row, true
		}
	}
	return SpeedRow{}, false
}
