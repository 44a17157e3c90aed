package onsale

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// redisSnapshot is what each Redis master had done at a moment: its commands
// by name (INFO commandstats, the probe's own INFO calls left out) and the
// CPU time its process had used (INFO cpu), by address.
type redisSnapshot struct {
	at    time.Time
	nodes map[string]nodeStats
}

type nodeStats struct {
	calls map[string]int64 // by command, lower case
	cpuS  float64          // used_cpu_user + used_cpu_sys
}

// RedisPhase is the Redis cost of one phase of the run: the commands every
// master ran in it, by command, per request of the phase's kind (as INFO
// commandstats counts them: the commands a Lua script calls count, beside the
// EVALSHA), and each master's CPU as a share of one thread (Redis runs
// commands on one): the cost that sizes the room's master.
type RedisPhase struct {
	Phase      string             `json:"phase"`
	Requests   int64              `json:"requests"` // of the phase's kind
	Seconds    float64            `json:"seconds"`
	Commands   int64              `json:"commands"`
	PerRequest float64            `json:"commands_per_request"`
	ByCommand  map[string]int64   `json:"by_command"`
	NodeCPU    map[string]float64 `json:"node_cpu_share"` // by master: CPU seconds / wall seconds
	MaxNodeCPU float64            `json:"max_node_cpu_share"`
}

// snapshotRedis reads INFO commandstats and INFO cpu of every master of rdb
// (a Redis Cluster's masters, or the one server).
func snapshotRedis(ctx context.Context, rdb redis.UniversalClient) (redisSnapshot, error) {
	out := redisSnapshot{at: time.Now(), nodes: map[string]nodeStats{}}
	var mu sync.Mutex
	read := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "commandstats", "cpu").Result()
		if err != nil {
			return err
		}
		st := parseInfo(info)
		mu.Lock()
		out.nodes[c.Options().Addr] = st
		mu.Unlock()
		return nil
	}
	if err := conn.ForEachMaster(ctx, rdb, read); err != nil {
		return redisSnapshot{}, fmt.Errorf("onsale: read Redis's INFO: %w", err)
	}
	return out, nil
}

// parseInfo reads the lines cmdstat_NAME:calls=N,… and used_cpu_user/sys.
func parseInfo(info string) nodeStats {
	st := nodeStats{calls: map[string]int64{}}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "cmdstat_"):
			for field := range strings.SplitSeq(rest, ",") {
				if v, ok := strings.CutPrefix(field, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					st.calls[strings.TrimPrefix(name, "cmdstat_")] = n
				}
			}
		case name == "used_cpu_user" || name == "used_cpu_sys":
			v, _ := strconv.ParseFloat(rest, 64)
			st.cpuS += v
		}
	}
	return st
}

// probeCommands are what the snapshots themselves cost: left out.
var probeCommands = map[string]bool{"info": true, "cluster|slots": true, "cluster|shards": true, "cluster|nodes": true, "ping": true}

// phase is the cost between two snapshots of requests requests.
func phase(name string, from, to redisSnapshot, requests int64) RedisPhase {
	p := RedisPhase{Phase: name, Requests: requests, Seconds: to.at.Sub(from.at).Seconds(),
		ByCommand: map[string]int64{}, NodeCPU: map[string]float64{}}
	for addr, after := range to.nodes {
		before, ok := from.nodes[addr]
		if !ok {
			continue // a node that became a master in between: not comparable
		}
		for cmd, n := range after.calls {
			if d := n - before.calls[cmd]; d > 0 && !probeCommands[cmd] {
				p.ByCommand[cmd] += d
				p.Commands += d
			}
		}
		if p.Seconds > 0 {
			share := (after.cpuS - before.cpuS) / p.Seconds
			p.NodeCPU[addr] = round2(share)
			p.MaxNodeCPU = max(p.MaxNodeCPU, round2(share))
		}
	}
	if requests > 0 {
		p.PerRequest = float64(p.Commands) / float64(requests)
	}
	return p
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// Text is the phase in a line: "polls: 0.012 Redis commands a request
// (1,204 in 98,000; evalsha 1,100…), the busiest master at 4 % of a thread".
func (p RedisPhase) Text() string {
	var cmds []string
	for _, c := range slices.SortedFunc(maps.Keys(p.ByCommand), func(a, b string) int {
		return int(p.ByCommand[b] - p.ByCommand[a])
	}) {
		if len(cmds) == 4 {
			break
		}
		cmds = append(cmds, fmt.Sprintf("%s %d", c, p.ByCommand[c]))
	}
	return fmt.Sprintf("%s: %.3f Redis commands a request, a script's own commands included (%d in %d requests, %.1f s; %s), the busiest master at %.0f%% of a thread",
		p.Phase, p.PerRequest, p.Commands, p.Requests, p.Seconds, strings.Join(cmds, ", "), p.MaxNodeCPU*100)
}
