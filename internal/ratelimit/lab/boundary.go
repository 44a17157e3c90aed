package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// BoundaryConfig is experiment 1: Requests requests just before a window
// boundary of Redis's clock and Requests just after, at Limit, against every
// algorithm at once (each on a key of its own).
type BoundaryConfig struct {
	// Limit is 100/1s, as in the lab.
	Limit Limit
	// Before is how long before the boundary the first burst starts (140 ms),
	// After how long after it the second starts (50 ms). The lab does not say
	// when its bursts went; 190 ms between them is what its token bucket's 119
	// implies, and 50 ms into the new window what its counter's 105 does.
	Before, After time.Duration
	// Requests is the size of each burst (100), sent by Senders goroutines (10).
	Requests, Senders int
	// Attempts is how many times the run is made again when a burst did not stay
	// on its side of the boundary (a busy machine can stretch a burst).
	Attempts int
}

// DefaultBoundary is the lab's experiment: 100/1s, 100 at −140 ms and 100 at +50 ms.
func DefaultBoundary() BoundaryConfig {
	return BoundaryConfig{Limit: Limit{N: 100, Window: time.Second}, Before: 140 * time.Millisecond,
		After: 50 * time.Millisecond, Requests: 100, Senders: 10, Attempts: 3}
}

// BoundaryRow is what one algorithm let through.
type BoundaryRow struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Origin string `json:"origin"`
	// Aimed is true for the row whose client aimed at the algorithm's own reset
	// (a primer request one window before the boundary) rather than the clock's.
	Aimed bool `json:"aimed_at_own_reset,omitempty"`
	// Burst1 and Burst2 are the requests allowed in each burst.
	Burst1 int `json:"allowed_burst1"`
	Burst2 int `json:"allowed_burst2"`
	// MaxInWindow is the figure: the most allowed in any sliding window (second).
	MaxInWindow int `json:"max_allowed_in_any_window"`
	// Bound is the most the algorithm may let through in this run by its own
	// rule (see boundOf).
	Bound int `json:"bound"`
	// Lab is the lab's figure, -1 when it published none.
	Lab int `json:"lab"`
	// Bins are the requests allowed per BinMs, from BinStartMs of the boundary.
	Bins []int `json:"allowed_per_bin"`
	// LastDecisionMs is when burst 2's last answer came, in ms after the boundary.
	LastDecisionMs float64 `json:"burst2_last_answer_ms"`
	// SpanMs is from burst 1's first request to burst 2's last answer.
	SpanMs float64 `json:"span_ms"`
	Error  string  `json:"error,omitempty"`
}

// BoundaryResult is experiment 1's outcome.
type BoundaryResult struct {
	Limit      string        `json:"limit"`
	BoundaryMs int64         `json:"boundary_unix_ms"`
	BeforeMs   float64       `json:"burst1_start_ms"`
	AfterMs    float64       `json:"burst2_start_ms"`
	Requests   int           `json:"requests_per_burst"`
	BinStartMs int           `json:"bin_start_ms"`
	BinMs      int           `json:"bin_ms"`
	Attempts   int           `json:"attempts"`
	Valid      bool          `json:"timing_valid"`
	Rows       []BoundaryRow `json:"rows"`
}

// Row returns the row of id (not aimed), and false when there is none.
func (r *BoundaryResult) Row(id string) (BoundaryRow, bool) {
	for _, row := range r.Rows {
		if row.ID == id && !row.Aimed {
			return row, true
		}
	}
	return BoundaryRow{}, false
}

// Bins of the chart: 100 ms from 300 ms before the boundary to 300 ms after.
const (
	binMs    = 100
	binStart = -300
	binCount = 6
)

// event is one request: when it was sent and answered, relative to the boundary
// on Redis's clock, and whether it was allowed.
type event struct {
	sent, answered time.Duration
	burst          int // 0 the primer, 1 or 2
	allowed        bool
}

// RunBoundary runs experiment 1 against algs, plus ulule/limiter aimed at its
// own reset when it is among them.
func RunBoundary(ctx context.Context, env Env, algs []Algorithm, cfg BoundaryConfig) (*BoundaryResult, error) {
	type plan struct {
		alg   Algorithm
		aimed bool
	}
	var plans []plan
	for _, a := range algs {
		plans = append(plans, plan{alg: a})
		if a.ID == "ulule" {
			plans = append(plans, plan{alg: a, aimed: true})
		}
	}
	res := &BoundaryResult{Limit: cfg.Limit.String(), BeforeMs: -ms(cfg.Before), AfterMs: ms(cfg.After),
		Requests: cfg.Requests, BinStartMs: binStart, BinMs: binMs}
	// Each algorithm has a client of its own, as a process would: a burst does
	// not wait for another algorithm's connections.
	clients, closeClients, err := env.clients(ctx, len(plans))
	if err != nil {
		return nil, err
	}
	defer closeClients()
	for attempt := 1; attempt <= max(1, cfg.Attempts); attempt++ {
		res.Attempts = attempt
		lims := make([]Limiter, len(plans))
		for i, p := range plans {
			suffix := fmt.Sprintf("boundary:%d:", attempt)
			if p.aimed {
				suffix = fmt.Sprintf("boundary-aimed:%d:", attempt)
			}
			lim, err := p.alg.New(clients[i], env.Prefix+p.alg.ID+":"+suffix, cfg.Limit)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.alg.Name, err)
			}
			lims[i] = lim
			// The connections open and the scripts loaded before the clock
			// starts: a burst should not spend its time dialing.
			if err := warmUp(ctx, lim, cfg.Senders); err != nil {
				return nil, fmt.Errorf("%s: %w", p.alg.Name, err)
			}
		}
		clk, err := newRedisClock(ctx, env)
		if err != nil {
			return nil, err
		}
		// The boundary: a whole window of Redis's clock, far enough ahead for the
		// primer, which goes one window before it.
		w := cfg.Limit.Window
		b := clk.now().Truncate(w).Add(w)
		for b.Sub(clk.now()) < w+200*time.Millisecond {
			b = b.Add(w)
		}
		clk.boundary = b
		res.BoundaryMs = b.UnixMilli()

		events := make([][]event, len(plans))
		errs := make([]error, len(plans))
		var wg sync.WaitGroup
		for i, p := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				events[i], errs[i] = runBursts(ctx, clk, lims[i], cfg, p.aimed)
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res.Rows = res.Rows[:0]
		res.Valid = true
		for i, p := range plans {
			row := summarize(p.alg, p.aimed, events[i], cfg)
			if errs[i] != nil {
				row.Error = errs[i].Error()
			}
			res.Rows = append(res.Rows, row)
			if !timingValid(events[i], p.aimed, cfg.Limit.Window) {
				res.Valid = false
			}
		}
		if res.Valid {
			break
		}
	}
	return res, nil
}

// warmUp makes n requests at once on keys of their own, so that the
// limiter's client has n connections open and its scripts loaded.
func warmUp(ctx context.Context, lim Limiter, n int) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = lim.Allow(ctx, "warm-up-"+strconv.Itoa(i))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runBursts sends one algorithm's requests: the primer (aimed only), burst 1
// and burst 2, each burst from cfg.Senders goroutines.
func runBursts(ctx context.Context, clk *redisClock, lim Limiter, cfg BoundaryConfig, aimed bool) ([]event, error) {
	var mu sync.Mutex
	var events []event
	var firstErr error
	send := func(burst int) {
		sent := clk.rel()
		ok, err := lim.Allow(ctx, "user")
		answered := clk.rel()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		events = append(events, event{sent: sent, answered: answered, burst: burst, allowed: ok})
	}
	burst := func(n int, at time.Duration) error {
		if err := clk.sleepUntil(ctx, at); err != nil {
			return err
		}
		var wg sync.WaitGroup
		for s := range cfg.Senders {
			count := cfg.Requests / cfg.Senders
			if s < cfg.Requests%cfg.Senders {
				count++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range count {
					send(n)
				}
			}()
		}
		wg.Wait()
		return nil
	}
	if aimed {
		// A client that read the limiter's reset (X-RateLimit-Reset) knows when
		// its window ends: the primer opens a window that ends 20 ms after the
		// boundary, between the two bursts.
		if err := clk.sleepUntil(ctx, -cfg.Limit.Window+20*time.Millisecond); err != nil {
			return nil, err
		}
		send(0)
	}
	if err := burst(1, -cfg.Before); err != nil {
		return nil, err
	}
	if err := burst(2, cfg.After); err != nil {
		return nil, err
	}
	return events, firstErr
}

// timingValid reports whether burst 1 was answered before the boundary and
// burst 2 sent after it (and, aimed, after the primer's window ended).
func timingValid(events []event, aimed bool, window time.Duration) bool {
	primerEnd := time.Duration(math.MinInt64)
	for _, e := range events {
		if e.burst == 0 {
			primerEnd = e.answered + window
		}
	}
	for _, e := range events {
		switch {
		case e.burst == 1 && e.answered >= 0:
			return false
		case e.burst == 2 && e.sent <= 0:
			return false
		case e.burst == 2 && aimed && e.sent <= primerEnd:
			return false
		}
	}
	return true
}

// summarize counts one algorithm's events into its row.
func summarize(a Algorithm, aimed bool, events []event, cfg BoundaryConfig) BoundaryRow {
	row := BoundaryRow{ID: a.ID, Name: a.Name, Origin: a.Origin, Aimed: aimed, Lab: -1, Bins: make([]int, binCount)}
	if !aimed {
		row.Lab = map[string]int{"fixed": LabBoundaryFixed, "log": LabBoundaryLog,
			"counter": LabBoundaryCounter, "bucket": LabBoundaryBucket}[a.ID]
		if row.Lab == 0 {
			row.Lab = -1
		}
	}
	var allowed []time.Duration
	first, last := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	for _, e := range events {
		if e.burst > 0 {
			first = min(first, e.sent)
		}
		if e.burst == 2 {
			last = max(last, e.answered)
		}
		if !e.allowed {
			continue
		}
		allowed = append(allowed, e.sent)
		switch e.burst {
		case 1:
			row.Burst1++
		case 2:
			row.Burst2++
		}
		if i := int(math.Floor((ms(e.sent) - binStart) / binMs)); i >= 0 && i < binCount {
			row.Bins[i]++
		}
	}
	row.MaxInWindow = maxInWindow(allowed, cfg.Limit.Window)
	if len(events) > 0 && last > first {
		row.LastDecisionMs, row.SpanMs = ms(last), ms(last-first)
	}
	row.Bound = boundOf(a.ID, cfg.Limit, row)
	return row
}

// boundOf is the most an algorithm may let through in any window of this run:
// a fixed window twice its limit; the log exactly its limit; the counter its
// limit plus the share of the new window elapsed at burst 2's last answer; a
// token bucket (and GCRA) its capacity plus what it refilled over the span.
func boundOf(id string, l Limit, row BoundaryRow) int {
	n := float64(l.N)
	w := ms(l.Window)
	switch id {
	case "fixed", "ulule":
		return 2 * l.N
	case "log":
		return l.N
	case "counter":
		return l.N + int(math.Ceil(n*row.LastDecisionMs/w))
	default: // bucket, stagedoor, redis_rate
		return l.N + int(math.Ceil(n*row.SpanMs/w))
	}
}

// maxInWindow is the most instants of ts within any half-open window [t, t+w).
func maxInWindow(ts []time.Duration, w time.Duration) int {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	best, j := 0, 0
	for i := range ts {
		for ts[i]-ts[j] >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
