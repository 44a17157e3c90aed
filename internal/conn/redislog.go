package conn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/outage"
)

// RedisLogger is go-redis's logger (give it to redis.SetLogger, once a
// process): its own lines, such as "connection pool: failed to dial", become
// outages of Redis in logger's JSON log, a WARN line when they start and at
// most one every 10 s with a count, instead of a plain-text line each. A line
// that names a node ("dial tcp 127.0.0.1:7001: …") is that node's outage,
// with "node": it ends, with an INFO line, when a client of conn.Redis
// connects to the node again, or when a cluster's slot map no longer has it
// (a replica took over and the dead node was forgotten). The other lines are
// one outage of Redis, as go-redis says nothing of their end.
func RedisLogger(logger *slog.Logger) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	l := &redisLog{logger: logger, general: outage.New(logger, "redis", 0), nodes: map[string]*outage.Reporter{}}
	redisLogs.Store(l)
	return l
}

// redisLogs is the RedisLogger of the process, if one was made.
var redisLogs atomic.Pointer[redisLog]

type redisLog struct {
	logger  *slog.Logger
	general *outage.Reporter
	mu      sync.Mutex
	nodes   map[string]*outage.Reporter // by address
}

// dialAddr finds the node of a failed dial in go-redis's line.
var dialAddr = regexp.MustCompile(`dial tcp ([^ ]+:[0-9]+)`)

func (l *redisLog) Printf(_ context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	if m := dialAddr.FindStringSubmatch(msg); m != nil {
		l.node(m[1]).Failed(errors.New(msg))
		return
	}
	l.general.Failed(errors.New(msg))
}

// node is the reporter of addr's outage, made on first use.
func (l *redisLog) node(addr string) *outage.Reporter {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.nodes[addr]
	if r == nil {
		r = outage.New(l.logger.With("node", addr), "redis", 0)
		l.nodes[addr] = r
	}
	return r
}

// reached ends the outage of the node at addr, if one is under way: a
// connection to it was just made.
func reached(addr string) {
	l := redisLogs.Load()
	if l == nil {
		return
	}
	l.mu.Lock()
	r := l.nodes[addr]
	l.mu.Unlock()
	if r.Out() {
		r.Ended()
	}
}

// forgotten ends the outage of every node that the slot map slots does not
// have: nothing will dial it again.
func forgotten(slots []redis.ClusterSlot) {
	l := redisLogs.Load()
	if l == nil {
		return
	}
	inMap := map[string]bool{}
	for _, s := range slots {
		for _, n := range s.Nodes {
			inMap[n.Addr] = true
		}
	}
	l.mu.Lock()
	var out []*outage.Reporter
	for addr, r := range l.nodes {
		if !inMap[addr] && r.Out() {
			out = append(out, r)
		}
	}
	l.mu.Unlock()
	for _, r := range out {
		r.Ended("why", "no longer in the cluster's slot map")
	}
}
