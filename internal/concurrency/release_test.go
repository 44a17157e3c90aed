package concurrency

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
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
