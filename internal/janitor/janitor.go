// Package janitor deletes, in the background and in small batches, what
// Stagedoor no longer needs: expired sessions and devices, Idempotency-Keys
// past their 24 hours, holds that ended long ago, scans of codes that named no
// ticket. Without it those tables grow with every login, checkout and junk
// scan, for ever.
//
// It owns no table and knows no SQL: each table's owner says what of its own is
// garbage (auth.Service.PurgeExpired, checkout.Service.PurgeKeys,
// hold.Service.PurgeEnded, scan.Service.PurgeJunk), and the janitor only
// calls them, a batch at a time, so that no statement holds many locks or runs
// long.
package janitor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/outage"
)

// Task is one kind of garbage: Purge deletes at most batch rows of it and says
// how many it deleted.
type Task struct {
	Name  string
	Purge func(ctx context.Context, batch int) (int64, error)
}

// Defaults of a Janitor.
const (
	DefaultEvery = time.Minute
	DefaultBatch = 500
	// maxBatches bounds one pass of one task: a backlog is worked off over
	// several passes rather than in one long burst.
	maxBatches = 100
)

// Janitor runs its tasks.
type Janitor struct {
	tasks   []Task
	batch   int
	logger  *slog.Logger
	deleted *prometheus.CounterVec
}

// New returns a Janitor of tasks, deleting batch rows per statement (0:
// DefaultBatch), counting what it deletes in stagedoor_janitor_deleted_total.
func New(tasks []Task, batch int, logger *slog.Logger, reg prometheus.Registerer) *Janitor {
	if batch <= 0 {
		batch = DefaultBatch
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	j := &Janitor{tasks: tasks, batch: batch, logger: logger,
		deleted: metrics.CounterVec(reg, "stagedoor_janitor_deleted_total", "Rows the janitor deleted, by what they were.", "what")}
	for _, t := range tasks {
		j.deleted.WithLabelValues(t.Name) // shown at 0 from the start
	}
	return j
}

// RunOnce runs every task, batch after batch until a batch comes back short
// (or maxBatches ran), and returns how many rows each deleted. It goes on to
// the next task when one fails, and returns the first error.
func (j *Janitor) RunOnce(ctx context.Context) (map[string]int64, error) {
	deleted := make(map[string]int64, len(j.tasks))
	var first error
	for _, t := range j.tasks {
		for range maxBatches {
			n, err := t.Purge(ctx, j.batch)
			deleted[t.Name] += n
			j.deleted.WithLabelValues(t.Name).Add(float64(n))
			if err != nil {
				if first == nil {
					first = fmt.Errorf("janitor: %s: %w", t.Name, err)
				}
				break
			}
			if n < int64(j.batch) {
				break
			}
		}
	}
	return deleted, first
}

// Run runs every task every interval until ctx ends. Failures are reported as
// the database's outage (a WARN line when they start, a count every 10 s).
func (j *Janitor) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	failures := outage.New(j.logger, "postgresql", 0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		deleted, err := j.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			failures.Failed(err)
		case err == nil:
			failures.Succeeded()
		}
		for what, n := range deleted {
			if n > 0 {
				j.logger.Debug("janitor deleted", "what", what, "rows", n)
			}
		}
	}
}
