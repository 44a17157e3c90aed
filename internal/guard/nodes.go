package guard

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/outage"
)

// Nodes keeps one Guard per node of a dependency (the masters of a Redis
// Cluster; the one server otherwise), made on first use with the same
// options: a dead node opens its own breaker and spends its own deadlines, and
// the keys of the healthy nodes never wait for it. Each node's failures are
// logged as that node's outage (a WARN line when they start, a count every
// 10 s) and counted in stagedoor_redis_calls_total{caller,node,result}.
//
// A node's outage ends at its next successful call, or, when it never
// answers again, once its keys are located on another node (a replica took
// over a dead master's slots): its INFO line then names that node
// (now_served_by). Nodes looks for that at most every sweepEvery, while an
// outage is under way and keys are asked for.
type Nodes struct {
	opts      Options
	locate    func(ctx context.Context, key string) string
	calls     *prometheus.CounterVec
	guards    sync.Map     // node address → *NodeGuard
	out       atomic.Int64 // node guards whose outage is under way
	lastSweep atomic.Int64 // when they were last looked at (Unix ns)
}

// sweepEvery is how often, at most, Nodes looks whether the keys of a node in
// an outage are served by another node now.
const sweepEvery = 250 * time.Millisecond

type nodeGuard struct {
	*Guard
	node               string
	outage             *outage.Reporter
	ok, failed, refuse prometheus.Counter     // its stagedoor_redis_calls_total series, resolved once
	out                atomic.Bool            // its outage is under way
	sample             atomic.Pointer[string] // a key it served since its last outage ended (or ever)
}

// NewNodes returns the guards of a dependency whose keys locate places on
// nodes (it returns a node's address, or "" when it cannot tell); o.Name names
// the caller in logs and metrics.
func NewNodes(o Options, locate func(ctx context.Context, key string) string, reg prometheus.Registerer) *Nodes {
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	if locate == nil {
		locate = func(context.Context, string) string { return "" }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Nodes{opts: o, locate: locate,
		calls: metrics.CounterVec(reg, "stagedoor_redis_calls_total", "Calls to a Redis node, by caller, node and result: ok, failed, or refused by the node's open breaker.", "caller", "node", "result")}
}

// For returns the guard of the node that serves key.
func (n *Nodes) For(ctx context.Context, key string) *NodeGuard {
	node := n.locate(ctx, key)
	if node == "" {
		node = "redis" // one server, or a cluster whose slot map is not known yet
	}
	if g, ok := n.guards.Load(node); ok {
		ng := g.(*NodeGuard)
		ng.keepSample(key)
		if n.out.Load() > 0 {
			n.sweep(ctx)
		}
		return ng
	}
	o := n.opts
	o.Name = n.opts.Name + " " + node
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Every result's series exists from the node's first call, at 0, so that
	// a rate over "failed" sees even an outage of one scrape.
	g, _ := n.guards.LoadOrStore(node, &NodeGuard{&nodeGuard{Guard: New(o), node: node,
		outage: outage.New(logger.With("caller", n.opts.Name, "node", node), "redis", 0),
		ok:     n.calls.WithLabelValues(n.opts.Name, node, "ok"),
		failed: n.calls.WithLabelValues(n.opts.Name, node, "failed"),
		refuse: n.calls.WithLabelValues(n.opts.Name, node, "refused")}, n})
	ng := g.(*NodeGuard)
	ng.keepSample(key)
	return ng
}

// keepSample keeps key as the key the node serves, unless it has one: from a
// node's first call on, so that once it is out a sweep can ask where that key
// lives now even when no call reaches the node again (the client followed its
// replica at once). A sample is dropped when an outage ends and the next call
// takes a fresh one; an outage that began after the key moved away (a
// resharding) may end at the next sweep and begin again at the next failure.
func (g *NodeGuard) keepSample(key string) {
	if g.g.sample.Load() == nil {
		k := key
		g.g.sample.Store(&k)
	}
}

// sweep ends the outage of each node whose sampled key another node serves
// now; at most once every sweepEvery, whoever calls.
func (n *Nodes) sweep(ctx context.Context) {
	now := n.opts.Now().UnixNano()
	last := n.lastSweep.Load()
	if now-last < int64(sweepEvery) || !n.lastSweep.CompareAndSwap(last, now) {
		return
	}
	n.guards.Range(func(_, v any) bool {
		g := v.(*NodeGuard).g
		if !g.out.Load() {
			return true
		}
		if k := g.sample.Load(); k != nil {
			if at := n.locate(ctx, *k); at != "" && at != g.node && g.out.CompareAndSwap(true, false) {
				n.out.Add(-1)
				g.sample.Store(nil)
				g.outage.Ended("now_served_by", at)
			}
		}
		return true
	})
}

// Timeout is the deadline of one call.
func (n *Nodes) Timeout() time.Duration { return n.opts.Timeout }

// NodeGuard is the guard of one node.
type NodeGuard struct {
	g     *nodeGuard
	nodes *Nodes
}

// Node is the node's address.
func (g *NodeGuard) Node() string { return g.g.node }

// Do is Guard.Do on the node's guard, with the result logged and counted.
func (g *NodeGuard) Do(ctx context.Context, call func(context.Context) error) error {
	return g.DoUntil(ctx, time.Now().Add(g.g.Timeout()), call)
}

// DoUntil is Guard.DoUntil on the node's guard, with the result logged and
// counted. A call whose caller went away is neither.
func (g *NodeGuard) DoUntil(ctx context.Context, deadline time.Time, call func(context.Context) error) error {
	err := g.g.DoUntil(ctx, deadline, call)
	switch {
	case err == nil:
		g.succeeded(ctx)
		g.g.ok.Inc()
	case ctx.Err() != nil:
	case isOpen(err):
		g.g.refuse.Inc()
	default:
		g.g.outage.Failed(err)
		if !g.g.out.Load() && g.g.outage.Out() && g.g.out.CompareAndSwap(false, true) {
			g.nodes.out.Add(1)
		}
		g.g.failed.Inc()
	}
	return err
}

// succeeded ends the node's outage, if one is under way, after a call made
// through its guard succeeded. The call went where the client routes the key,
// which is another node when the client followed a promoted replica between
// For and the call (it fetched the slot map, or was redirected): the dead node
// did not answer, so the INFO line names the node that serves its keys now,
// as a sweep's would.
func (g *NodeGuard) succeeded(ctx context.Context) {
	if !g.g.out.Load() {
		g.g.outage.Succeeded()
		return
	}
	var attrs []any
	if k := g.g.sample.Load(); k != nil {
		if at := g.nodes.locate(ctx, *k); at != "" && at != g.g.node {
			attrs = []any{"now_served_by", at}
		}
	}
	if g.g.out.CompareAndSwap(true, false) {
		g.nodes.out.Add(-1)
		g.g.sample.Store(nil)
	}
	g.g.outage.Ended(attrs...)
}

// State is the node's breaker's state now.
func (g *NodeGuard) State() gobreaker.State { return g.g.State() }
