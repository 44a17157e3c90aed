package conn_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/conn/conntest"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestNodeHealthBlamesOnlyTheDeadNode: while one node of a cluster stays
// dead, every answer of NodeHealth says that node is down and every other
// node ok, however often it is asked within the readiness deadline. Every
// master has a replica in sync until then; once the dead master's replica has
// taken over, Health says that one has none (redundancy lost).
func TestNodeHealthBlamesOnlyTheDeadNode(t *testing.T) {
	c, rdb := conntest.Cluster(t)
	ctx := context.Background()
	cluster := rdb.(*conn.ClusterClient)
	// A master counts its replica online once the replica has acknowledged its
	// first sync, a moment after the replica says its link is up.
	testenv.Eventually(t, 0, func() bool {
		return len(cluster.Health(ctx).WithoutReplica) == 0
	}, "every master of a fresh cluster with a replica online")
	dead := c.Masters(t)[0]
	key := "k"
	for i := 0; c.MasterOf(t, key) != dead; i++ {
		key = fmt.Sprintf("k%d", i)
	}
	c.Kill(t, dead)

	for i := range 30 {
		askCtx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		nodes := cluster.NodeHealth(askCtx)
		cancel()
		for addr, state := range nodes {
			if want := map[bool]string{true: "down", false: "ok"}[addr == dead]; state != want {
				t.Fatalf("ask %d: node %s is %q, want %q (dead: %s): %v", i, addr, state, want, dead, nodes)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	c.WaitHealthy(t, 60*time.Second)
	promoted := c.MasterOf(t, key)
	var h conn.ClusterHealth
	testenv.Eventually(t, 0, func() bool { // each ask fetches the map
		askCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		h = cluster.Health(askCtx)
		return len(h.WithoutReplica) > 0 && h.Nodes[promoted] == "ok"
	}, "the promoted replica in the client's map")
	if len(h.WithoutReplica) != 1 || h.WithoutReplica[0] != promoted {
		t.Errorf("after the takeover: masters without a replica %v, want only %s, the promoted replica (nodes %v)", h.WithoutReplica, promoted, h.Nodes)
	}
}
