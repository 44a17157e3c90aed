package lab

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// sampleUsage averages MEMORY USAGE over up to n keys under prefix (and
// RedisRatePrefix + prefix), leaving out the warm-up key.
func sampleUsage(ctx context.Context, rdb redis.UniversalClient, prefix string, n int) (float64, error) {
	var mu sync.Mutex
	var sum, count int64
	err := conn.ForEachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		for _, pattern := range []string{prefix + "*", RedisRatePrefix + prefix + "*"} {
			keys, _, err := c.Scan(ctx, 0, escapeGlob(pattern), int64(4*n)).Result()
			if err != nil {
				return err
			}
			pipe := c.Pipeline()
			var cmds []*redis.IntCmd
			for _, k := range keys {
				if len(cmds) < n && !strings.Contains(k, "warm-up") {
					cmds = append(cmds, pipe.MemoryUsage(ctx, k, 0))
				}
			}
			if len(cmds) == 0 {
				continue
			}
			if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
				return err
			}
			mu.Lock()
			for _, c := range cmds {
				if v, err := c.Result(); err == nil {
					sum += v
					count++
				}
			}
			mu.Unlock()
		}
		return nil
	})
	if count == 0 {
		return 0, err
	}
	return float64(sum) / float64(count), err
}

// infoMemory sums numeric fields of INFO memory over every master.
func infoMemory(ctx context.Context, rdb redis.UniversalClient, fields ...string) (map[string]int64, error) {
	var mu sync.Mutex
	total := map[string]int64{}
	err := conn.ForEachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		found := 0
		for _, line := range strings.Split(info, "\n") {
			name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !slices.Contains(fields, name) {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("INFO memory %s: %w", name, err)
			}
			mu.Lock()
			total[name] += n
			mu.Unlock()
			found++
		}
		if found != len(fields) {
			return fmt.Errorf("INFO memory lacks one of %v", fields)
		}
		return nil
	})
	return total, err
}

// usedMemory is INFO memory's used_memory less the clients' buffers
// (mem_clients_normal, mem_clients_slaves), summed over the masters: a
// connection opened or a pipeline's query buffer is no user's state.
func usedMemory(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	m, err := infoMemory(ctx, rdb, "used_memory", "mem_clients_normal", "mem_clients_slaves")
	return m["used_memory"] - m["mem_clients_normal"] - m["mem_clients_slaves"], err
}

// settle waits (at most 3 s) until Redis has freed what UNLINK handed to its
// background thread and used_memory has held still for 250 ms, two ticks and
// more of Redis's cron: after many keys go, the cron shrinks the key space's
// hash tables, which would otherwise shrink under the next measurement.
func settle(ctx context.Context, rdb redis.UniversalClient) error {
	deadline := time.Now().Add(3 * time.Second)
	last := int64(-1 << 62)
	for {
		m, err := infoMemory(ctx, rdb, "lazyfree_pending_objects", "used_memory")
		if err != nil {
			return err
		}
		used := m["used_memory"]
		if (m["lazyfree_pending_objects"] == 0 && abs(used-last) < 4096) || time.Now().After(deadline) {
			return nil
		}
		last = used
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
