package conn

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestGoRedisOutagesArePerNodeAndEnd: go-redis's failed dials of two nodes
// are two outages, each with its node; one ends when a client connects to
// its node again, the other when a cluster's slot map no longer has its
// node; a line that names no node is an outage of Redis alone.
func TestGoRedisOutagesArePerNodeAndEnd(t *testing.T) {
	var log testenv.LogBuffer
	l := RedisLogger(slog.New(slog.NewJSONHandler(&log, nil)))
	t.Cleanup(func() { redisLogs.Store(nil) })
	ctx := context.Background()

	// A node that answers (a listener of the test's), and one that is gone.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	back, gone := ln.Addr().String(), "127.0.0.1:1"
	for _, addr := range []string{back, back, gone} {
		l.Printf(ctx, "redis: connection pool: failed to dial after 1 attempts: dial tcp %s: connect: connection refused", addr)
	}
	l.Printf(ctx, "redis: getting command info: %s", "ERR unknown command")

	client := redis.NewClient(&redis.Options{Addr: back, MaxRetries: -1})
	client.AddHook(nodeHook{})
	defer client.Close()
	_ = client.Ping(ctx).Err() // dials, then fails to read: the node was reached
	forgotten([]redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: back}}}})

	var started, ended []string
	for _, line := range log.Lines(t) {
		node, _ := line["node"].(string)
		switch line["msg"] {
		case "dependency unavailable":
			started = append(started, node)
		case "dependency available again":
			ended = append(ended, node+" "+func() string { s, _ := line["why"].(string); return s }())
		}
	}
	if want := []string{back, gone, ""}; strings.Join(started, ",") != strings.Join(want, ",") {
		t.Errorf("outages begun for %q, want %q (one a node, and one without)", started, want)
	}
	if want := []string{back + " ", gone + " no longer in the cluster's slot map"}; strings.Join(ended, ",") != strings.Join(want, ",") {
		t.Errorf("outages ended: %q, want %q", ended, want)
	}
}
