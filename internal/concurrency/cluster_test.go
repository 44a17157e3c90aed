package concurrency

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/conn/conntest"
)

// TestCluster: on a 3+3 Redis Cluster, through conn's cluster client and
// conn.NodeOf, two buyers whose keys live on different masters are each
// limited; a renewal round reaches both masters; the Redis calls are counted
// under each master's address; and when one master dies, only its buyer fails
// open, while the other is still limited.
func TestCluster(t *testing.T) {
	c, rdb := conntest.Cluster(t)
	ctx := context.Background()
	l, reg := newTestLimiter(rdb, Options{Max: 2, Prefix: "sd:", Timeout: time.Second,
		NodeOf: func(ctx context.Context, key string) string { return conn.NodeOf(ctx, rdb, key) }})

	// Two buyers served by two different masters.
	a, b := "1", ""
	for i := 2; b == ""; i++ {
		if id := strconv.Itoa(i); c.MasterOf(t, l.Key(id)) != c.MasterOf(t, l.Key(a)) {
			b = id
		}
	}
	masterA, masterB := c.MasterOf(t, l.Key(a)), c.MasterOf(t, l.Key(b))
	t.Logf("buyer %s on %s, buyer %s on %s", a, masterA, b, masterB)

	var rels []func()
	for _, id := range []string{a, b} {
		for i := range 2 {
			d, rel := l.Enter(ctx, id)
			rels = append(rels, rel)
			if d.Outcome != OutcomeAllowed || d.InFlight != i+1 {
				t.Fatalf("buyer %s, request %d: %+v", id, i+1, d)
			}
		}
		if d, _ := l.Enter(ctx, id); d.Outcome != OutcomeDenied || d.InFlight != 2 {
			t.Fatalf("buyer %s, request 3: %+v", id, d)
		}
	}
	if r, lost := l.renew(ctx); r != 4 || lost != 0 {
		t.Fatalf("renewal on the cluster: renewed %d, lost %d; want 4, 0", r, lost)
	}
	called := nodesCalled(t, reg)
	if len(called) != 2 || !called[masterA] || !called[masterB] {
		t.Fatalf("Redis calls counted under %v, want %s and %s", called, masterA, masterB)
	}

	node := func(addr string) *redis.Client {
		cl := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	if n := node(masterA).ZCard(ctx, l.Key(a)).Val(); n != 2 {
		t.Fatalf("buyer %s has %d leases on %s, want 2", a, n, masterA)
	}
	for _, rel := range rels {
		rel()
	}
	if n := node(masterA).Exists(ctx, l.Key(a)).Val() + node(masterB).Exists(ctx, l.Key(b)).Val(); n != 0 {
		t.Fatalf("%d keys left after every release", n)
	}

	// Master A dies: its buyer's requests go on unlimited, buyer B's are
	// still limited, and B's Redis calls never wait for A.
	c.Kill(t, masterA)
	if d, _ := l.Enter(ctx, a); d.Outcome != OutcomeFailOpen {
		t.Fatalf("buyer %s with %s dead: %+v", a, masterA, d)
	}
	for i := range 3 {
		d, _ := l.Enter(ctx, b)
		want := OutcomeAllowed
		if i == 2 {
			want = OutcomeDenied
		}
		if d.Outcome != want {
			t.Fatalf("buyer %s with %s dead, request %d: %+v, want %s", b, masterA, i+1, d, want)
		}
	}
}
