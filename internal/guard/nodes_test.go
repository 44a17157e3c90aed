package guard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sony/gobreaker/v2"
)

// One dead node opens its own breaker only: calls for keys of the other nodes
// go on, and each node's results are counted apart.
func TestNodesHaveBreakersOfTheirOwn(t *testing.T) {
	reg := prometheus.NewRegistry()
	locate := func(_ context.Context, key string) string {
		return map[string]string{"a": "node-1", "b": "node-2"}[key]
	}
	n := NewNodes(Options{Name: "test", Failures: 2, Cooldown: time.Minute}, locate, reg)
	ctx := context.Background()
	dead := errors.New("connection refused")
	for range 3 {
		_ = n.For(ctx, "a").Do(ctx, func(context.Context) error { return dead })
	}
	if st := n.For(ctx, "a").State(); st != gobreaker.StateOpen {
		t.Fatalf("node-1's breaker is %v after its failures, want open", st)
	}
	if err := n.For(ctx, "b").Do(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("node-2's call: %v, want it made", err)
	}
	if err := n.For(ctx, "a").Do(ctx, func(context.Context) error { return nil }); !errors.Is(err, ErrOpen) {
		t.Errorf("node-1's call while its breaker is open: %v, want ErrOpen", err)
	}
	calls := n.calls
	for _, c := range []struct {
		node, result string
		want         float64
	}{{"node-1", "failed", 2}, {"node-1", "refused", 2}, {"node-2", "ok", 1}} {
		if got := testutil.ToFloat64(calls.WithLabelValues("test", c.node, c.result)); got != c.want {
			t.Errorf("calls{%s,%s} = %v, want %v", c.node, c.result, got, c.want)
		}
	}
	if got := n.For(ctx, "unknown key").Node(); got != "redis" {
		t.Errorf("a key no node serves is node %q, want redis", got)
	}
}
