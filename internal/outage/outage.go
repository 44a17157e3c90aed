// Package outage logs a dependency's outage the way it is read during an
// incident: one WARN line when it starts (at its first failure, or at a
// threshold of failures in a row), then at most one WARN line an interval
// saying how many failures there were since the last line, and one INFO line
// when it ends. Never a line per failed request: an outage of PostgreSQL,
// Redis or Payrail under load would otherwise bury every other line.
package outage

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultEvery is how often a continuing outage is logged again.
const DefaultEvery = 10 * time.Second

// Reporter counts the failures of one dependency and logs them. Its methods
// are safe for concurrent use; a nil *Reporter does nothing.
type Reporter struct {
	logger     *slog.Logger
	dependency string
	every      time.Duration
	threshold  int64 // failures in a row that make an outage
	now        func() time.Time

	mu        sync.Mutex
	streak    int64 // failures in a row while not down
	down      bool
	announced bool      // the outage's first line is written
	since     time.Time // first failure of this outage
	lastLine  time.Time
	total     int64 // failures in this outage
	unlogged  int64 // failures since the last line
	lastErr   string
}

// New returns a Reporter of dependency (as it appears in the log: "payrail",
// "postgresql", "redis") that logs to logger at most once every interval
// (DefaultEvery when not positive).
func New(logger *slog.Logger, dependency string, every time.Duration) *Reporter {
	if every <= 0 {
		every = DefaultEvery
	}
	return &Reporter{logger: logger, dependency: dependency, every: every, threshold: 1, now: time.Now}
}

// WithThreshold makes an outage begin only at the n-th failure in a row, with
// no success between: fewer are no outage, and are not logged. It returns r.
func (r *Reporter) WithThreshold(n int) *Reporter {
	r.threshold = int64(max(n, 1))
	return r
}

// Failed counts one failure. The one that begins an outage (the threshold's,
// the first by default) is logged at once; later ones are summed into at most
// one line an interval.
func (r *Reporter) Failed(err error) { r.failed(err, false) }

// Down counts one failure that is an outage whatever the threshold: the
// caller knows the dependency is down (its circuit breaker opened).
func (r *Reporter) Down(err error) { r.failed(err, true) }

func (r *Reporter) failed(err error, down bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	now := r.now()
	if err != nil {
		r.lastErr = err.Error()
	}
	if !r.down {
		if r.streak++; r.streak == 1 {
			r.since = now
		}
		if !down && r.streak < r.threshold {
			r.mu.Unlock()
			return
		}
		// The failures of the streak are this outage's.
		r.down, r.announced, r.total, r.unlogged, r.streak = true, false, r.streak-1, r.streak-1, 0
	}
	r.total++
	r.unlogged++
	if !r.announced || now.Sub(r.lastLine) >= r.every {
		msg := "dependency failing"
		if !r.announced {
			msg = "dependency unavailable"
		}
		attrs := []any{"dependency", r.dependency, "failures", r.unlogged, "failures_in_outage", r.total,
			"since", r.since.UTC(), "error", r.lastErr}
		r.lastLine, r.unlogged, r.announced = now, 0, true
		r.mu.Unlock()
		r.logger.Warn(msg, attrs...)
		return
	}
	r.mu.Unlock()
}

// Succeeded ends an outage, if one is under way, with an INFO line saying how
// long it lasted and how many failures it had.
func (r *Reporter) Succeeded() { r.Ended() }

// Ended ends an outage, if one is under way, as Succeeded does, with attrs
// (key, value pairs) added to its INFO line: for an outage that ends without
// a success of its own, such as a dead Redis master whose slots another node
// now serves.
func (r *Reporter) Ended(attrs ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.streak = 0
	if !r.down {
		r.mu.Unlock()
		return
	}
	line := append([]any{"dependency", r.dependency, "failures_in_outage", r.total,
		"lasted", r.now().Sub(r.since).Round(time.Millisecond).String()}, attrs...)
	r.down = false
	r.mu.Unlock()
	r.logger.Info("dependency available again", line...)
}

// Out reports whether an outage is under way: begun and not yet ended.
func (r *Reporter) Out() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}
