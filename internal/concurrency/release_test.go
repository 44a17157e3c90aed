package concurrency

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestReleasesTogether: leases of many identities given back at once, while
// removals are on their way, all leave Redis, each by the time its release
// returns, in fewer round trips than leases, and the identities' places are
// free at once.
func TestReleasesTogether(t *testing.T) {
	rdb, prefix := sharedRedis(t, 8)
	l, reg := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix, Lease: 10 * time.Second})
	ctx := context.Background()
	const n = 200
	rels := make([]func(), n)
	for i := range n {
		d, rel := l.Enter(ctx, strconv.Itoa(i))
		if !d.Allowed {
			t.Fatalf("identity %d: %+v", i, d)
		}
		rels[i] = rel
	}
	before := redisCalls(t, reg, "ok")
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rels[i]()
			if got, err := rdb.ZCard(ctx, l.Key(strconv.Itoa(i))).Result(); err != nil || got != 0 {
				t.Errorf("identity %d: %d leases (%v) once its release returned, want 0", i, got, err)
			}
		})
	}
	wg.Wait()
	if calls := redisCalls(t, reg, "ok") - before; calls >= n {
		t.Errorf("%d leases given back together took %d calls, want fewer", n, calls)
	}
	if l.Leases() != 0 {
		t.Fatalf("Leases %d after the releases", l.Leases())
	}
	for i := range n {
		if d, _ := l.Enter(ctx, strconv.Itoa(i)); !d.Allowed {
			t.Fatalf("identity %d after its release: %+v", i, d)
		}
	}
}

// gateHook holds every command on a key that contains slow until gate is
// closed: a node that stalls, on a real Redis.
type gateHook struct {
	slow string
	gate chan struct{}
	held chan struct{} // closed when a command is first held
	once sync.Once
}

func (h *gateHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.hold(cmd)
		return next(ctx, cmd)
	}
}

func (h *gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.hold(cmd)
		}
		return next(ctx, cmds)
	}
}

func (h *gateHook) hold(cmd redis.Cmder) {
	if cmd.Name() == "zrem" && strings.Contains(fmt.Sprint(cmd.Args()...), h.slow) {
		h.once.Do(func() { close(h.held) })
		<-h.gate
	}
}

// TestAStalledNodeHoldsUpOnlyItsOwnReleases: while the removal of a lease on
// one node is stalled, a lease on another node is given back at once: the
// leases given back together are gathered per node.
func TestAStalledNodeHoldsUpOnlyItsOwnReleases(t *testing.T) {
	rdb, prefix := sharedRedis(t, 8)
	hook := &gateHook{slow: "stalled", gate: make(chan struct{}), held: make(chan struct{})}
	rdb.AddHook(hook)
	nodeOf := func(_ context.Context, key string) string {
		if strings.Contains(key, "stalled") {
			return "node-a"
		}
		return "node-b"
	}
	l, _ := newTestLimiter(rdb, Options{Max: 1, Prefix: prefix, Lease: 10 * time.Second, NodeOf: nodeOf})
	ctx := context.Background()
	_, relStalled := l.Enter(ctx, "stalled")
	_, relHealthy := l.Enter(ctx, "healthy")
	stalledDone := make(chan struct{})
	go func() { relStalled(); close(stalledDone) }()
	<-hook.held // its ZREM is on its way, and held
	healthyDone := make(chan struct{})
	go func() { relHealthy(); close(healthyDone) }()
	select {
	case <-healthyDone:
	case <-stalledDone:
		t.Fatal("the stalled node's release returned while its ZREM was held")
	case <-time.After(10 * time.Second):
		close(hook.gate)
		t.Fatal("the healthy node's release waited for the stalled node's")
	}
	if got := rdb.ZCard(ctx, l.Key("healthy")).Val(); got != 0 {
		t.Errorf("the healthy identity holds %d leases once its release returned, want 0", got)
	}
	close(hook.gate)
	<-stalledDone
	if got := rdb.ZCard(ctx, l.Key("stalled")).Val(); got != 0 {
		t.Errorf("the stalled identity holds %d leases once its release returned, want 0", got)
	}
}
