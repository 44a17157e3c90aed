// Package outage logs a dependency's outage the way it is read during an
// incident: one WARN line when it starts, then at most one WARN line an interval
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
	now        func() time.Time

	mu       sync.Mutex
	down     bool
	since    time.Time // first failure of this outage
	lastLine time.Time
	total    int64 // failures in this outage
	unlogged int64 // failures since the last line
	lastErr  string
}

// New returns a Reporter of dependency (as it appears in the log: "payrail",
// "postgresql", "redis") that logs to logger at most once every interval
// (DefaultEvery when not positive).
func New(logger *slog.Logger, dependency string, every time.Duration) *Reporter {
	if every <= 0 {
		every = DefaultEvery
	}
	return &Reporter{logger: logger, dependency: dependency, every: every, now: time.Now}
}

// Failed counts one failure. The first of an outage is logged at once; later
// ones are summed into at most one line an interval.
func (r *Reporter) Failed(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	now := r.now()
	if !r.down {
		r.down, r.since, r.total, r.unlogged = true, now, 0, 0
	}
	r.total++
	r.unlogged++
	if err != nil {
		r.lastErr = err.Error()
	}
	if r.unlogged > 0 && (r.total == 1 || now.Sub(r.lastLine) >= r.every) {
		msg := "dependency failing"
		if r.total == 1 {
			msg = "dependency unavailable"
		}
		attrs := []any{"dependency", r.dependency, "failures", r.unlogged, "failures_in_outage", r.total,
			"since", r.since.UTC(), "error", r.lastErr}
		r.lastLine, r.unlogged = now, 0
		r.mu.Unlock()
		r.logger.Warn(msg, attrs...)
		return
	}
	r.mu.Unlock()
}

// Succeeded ends an outage, if one is under way, with an INFO line saying how
// long it lasted and how many failures it had.
func (r *Reporter) Succeeded() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.down {
		r.mu.Unlock()
		return
	}
	attrs := []any{"dependency", r.dependency, "failures_in_outage", r.total,
		"lasted", r.now().Sub(r.since).Round(time.Millisecond).String()}
	r.down = false
	r.mu.Unlock()
	r.logger.Info("dependency available again", attrs...)
}
