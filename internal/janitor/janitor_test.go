package janitor

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// backlog is garbage of n rows, deleted batch by batch.
type backlog struct{ n, calls int }

func (b *backlog) purge(_ context.Context, batch int) (int64, error) {
	b.calls++
	d := min(b.n, batch)
	b.n -= d
	return int64(d), nil
}

func TestRunOnceWorksOffABacklogInBatchesAndGoesOnPastAFailure(t *testing.T) {
	small, huge := &backlog{n: 25}, &backlog{n: 10 * maxBatches * 2}
	broken := func(context.Context, int) (int64, error) { return 0, errors.New("database down") }
	reg := prometheus.NewRegistry()
	j := New([]Task{{"broken", broken}, {"small", small.purge}, {"huge", huge.purge}}, 10, nil, reg)

	deleted, err := j.RunOnce(context.Background())
	if err == nil || deleted["small"] != 25 || small.calls != 3 {
		t.Errorf("deleted %v in %d calls (%v); want small's 25 in 3 batches of 10, and broken's error", deleted, small.calls, err)
	}
	if deleted["huge"] != 10*maxBatches || huge.calls != maxBatches {
		t.Errorf("huge: %d deleted in %d calls, want one pass bounded to %d batches", deleted["huge"], huge.calls, maxBatches)
	}
	if got := testutil.ToFloat64(j.deleted.WithLabelValues("small")); got != 25 {
		t.Errorf("stagedoor_janitor_deleted_total{what=small} = %v, want 25", got)
	}
	if _, err := j.RunOnce(context.Background()); huge.n != 0 {
		t.Errorf("the second pass left %d of the backlog (%v)", huge.n, err)
	}
}
