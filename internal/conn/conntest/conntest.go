// Package conntest gives tests conn's clients of the servers testenv starts.
package conntest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// Cluster starts a private Redis Cluster (testenv.StartCluster) and returns
// it with conn's client of it (a *conn.ClusterClient), which logs nothing and
// is closed when the test ends.
func Cluster(t testing.TB) (*testenv.Cluster, redis.UniversalClient) {
	t.Helper()
	c := testenv.StartCluster(t)
	rdb, err := conn.Redis(context.Background(), c.URL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return c, rdb
}
