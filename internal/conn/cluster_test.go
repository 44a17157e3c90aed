package conn_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestNodeHealthBlamesOnlyTheDeadNode: while one node of a cluster stays
// dead, every answer of NodeHealth says that node is down and every other
// node ok, however often it is asked within the readiness deadline.
func TestNodeHealthBlamesOnlyTheDeadNode(t *testing.T) {
	c := testenv.StartCluster(t)
	ctx := context.Background()
	rdb, err := conn.Redis(ctx, c.URL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cluster := rdb.(*conn.ClusterClient)
	dead := c.Masters(t)[0]
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
}
