package guard

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sony/gobreaker/v2"

	"github.com/stagedoor/stagedoor/internal/testenv"
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

// nodesOfMovingKey returns Nodes (breakers open after 2 failures) that locate
// key "a" on node-1 until at is set to another node, and every other key on
// node-2; their log, and the sweeps' clock, moved by hand.
func nodesOfMovingKey() (n *Nodes, log *testenv.LogBuffer, at *atomic.Value, now *testenv.Clock) {
	return nodesOfMovingKeyOpenAfter(2)
}

// nodesOfMovingKeyOpenAfter is nodesOfMovingKey with breakers that open after
// failures failures.
func nodesOfMovingKeyOpenAfter(failures int) (n *Nodes, log *testenv.LogBuffer, at *atomic.Value, now *testenv.Clock) {
	log, at, now = new(testenv.LogBuffer), new(atomic.Value), testenv.NewClock(time.Unix(1_700_000_000, 0))
	at.Store("node-1")
	locate := func(_ context.Context, key string) string {
		if key == "a" {
			return at.Load().(string)
		}
		return "node-2"
	}
	n = NewNodes(Options{Name: "test", Failures: failures, Cooldown: time.Minute, Logger: slog.New(slog.NewJSONHandler(log, nil)), Now: now.Now}, locate, nil)
	return n, log, at, now
}

// TestAnOutageEndsWhenNoCallReachesTheDeadNodeAgain: a node that went out on
// its last call, whose keys moved at once (the client followed the replica
// before any other call was sent to it), still has its outage ended by a
// sweep: it never got a call after it went out, so its sample is the key it
// served before.
func TestAnOutageEndsWhenNoCallReachesTheDeadNodeAgain(t *testing.T) {
	n, log, at, now := nodesOfMovingKey()
	ctx := context.Background()
	dead := errors.New("connection refused")
	g := n.For(ctx, "a")
	for range 2 { // calls in flight together, all on the guard taken before
		_ = g.Do(ctx, func(context.Context) error { return dead })
	}
	if n.out.Load() != 1 {
		t.Fatalf("node-1 is not out after its failures: %d out", n.out.Load())
	}
	at.Store("node-3") // the client follows the replica before any other call
	for step := time.Duration(0); !strings.Contains(log.String(), `"now_served_by":"node-3"`); step += time.Millisecond {
		if step > 2*sweepEvery {
			t.Fatalf("node-1's outage still on %s after node-3 took its keys, no call reaching node-1:\n%s", step, log.String())
		}
		_ = n.For(ctx, "b").Do(ctx, func(context.Context) error { return nil })
		now.Add(time.Millisecond)
	}
	if n.out.Load() != 0 {
		t.Errorf("%d nodes still out", n.out.Load())
	}
}

// TestACallThatReachedTheNewNodeNamesIt: a call taken on the dead node's
// guard that succeeds because the client routed it to the promoted replica
// (it followed between For and the call) ends the outage naming the node that
// answered, not as if the dead node had come back.
func TestACallThatReachedTheNewNodeNamesIt(t *testing.T) {
	n, log, at, _ := nodesOfMovingKeyOpenAfter(10) // out, its breaker still closed
	ctx := context.Background()
	dead := errors.New("connection refused")
	for range 3 {
		_ = n.For(ctx, "a").Do(ctx, func(context.Context) error { return dead })
	}
	g := n.For(ctx, "a") // still located on node-1
	at.Store("node-3")   // the client follows before the call is sent
	if err := g.Do(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `"now_served_by":"node-3"`) {
		t.Errorf("the outage's end does not name node-3, which answered:\n%s", log.String())
	}
	if n.out.Load() != 0 {
		t.Errorf("%d nodes still out", n.out.Load())
	}
}

// TestADeadNodesOutageEndsWhenAnotherServesItsKeys: a node that never answers
// again (a dead master) has its outage ended, with an INFO line naming the
// node that serves its keys now, once they are located there (its replica
// took over); until then its outage goes on.
func TestADeadNodesOutageEndsWhenAnotherServesItsKeys(t *testing.T) {
	n, log, at, now := nodesOfMovingKey()
	ctx := context.Background()
	dead := errors.New("connection refused")
	for range 3 {
		_ = n.For(ctx, "a").Do(ctx, func(context.Context) error { return dead })
	}
	ended := func() bool { return strings.Contains(log.String(), `"msg":"dependency available again"`) }
	// While node-1 still serves "a", however long (three sweeps' worth, a
	// millisecond a step) and whatever else is asked, its outage goes on.
	for range 3 * sweepEvery / time.Millisecond {
		_ = n.For(ctx, "b").Do(ctx, func(context.Context) error { return nil })
		_ = n.For(ctx, "a")
		now.Add(time.Millisecond)
	}
	if ended() {
		t.Fatalf("node-1's outage ended while it still serves its keys:\n%s", log.String())
	}
	at.Store("node-3") // its replica took over
	// The next sweep, at most sweepEvery later, ends it.
	for step := time.Duration(0); !ended(); step += time.Millisecond {
		if step > sweepEvery {
			t.Fatalf("node-1's outage still on %s after node-3 took its keys:\n%s", step, log.String())
		}
		_ = n.For(ctx, "b").Do(ctx, func(context.Context) error { return nil })
		now.Add(time.Millisecond)
	}
	var line map[string]any
	for raw := range strings.Lines(log.String()) {
		if strings.Contains(raw, "dependency available again") {
			if err := json.Unmarshal([]byte(raw), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line["node"] != "node-1" || line["now_served_by"] != "node-3" || line["failures_in_outage"] != 2.0 {
		t.Errorf("the end of the outage: %v, want node-1's, now served by node-3, with its 2 failures", line)
	}
	if n.out.Load() != 0 {
		t.Errorf("%d outages still counted under way", n.out.Load())
	}
}
