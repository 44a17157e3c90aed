package waitroom

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// usage is what one redis-server has spent so far, from INFO cpu and INFO
// commandstats.
type usage struct {
	cpu     float64 // CPU seconds of the whole process: used_cpu_user + used_cpu_sys
	calls   int64   // commands run, those of scripts included, INFO left out
	scripts int64   // EVAL and EVALSHA
	usec    float64 // command time of the commands clients sent (topLevel)
}

// topLevel are the commands the benchmarks send that the scripts do not
// call themselves: their usec is the command time, which for a script covers
// every command it runs (a script's own commands are counted apart too, so
// summing every cmdstat would count them twice). The room's script calls
// ZREM only for a buyer who joins again after her admission lapsed, which no
// benchmark does.
var topLevel = map[string]bool{"evalsha": true, "eval": true, "zrem": true}

// usageOf reads the server's usage.
func usageOf(tb testing.TB, c *redis.Client) usage {
	tb.Helper()
	info, err := c.Info(context.Background(), "cpu", "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var u usage
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			v, _ := strconv.ParseFloat(rest, 64)
			u.cpu += v
			continue
		}
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok || cmd == "info" {
			continue
		}
		var calls int64
		var usec float64
		for _, field := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			switch k {
			case "calls":
				calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				usec, _ = strconv.ParseFloat(v, 64)
			}
		}
		u.calls += calls
		if cmd == "evalsha" || cmd == "eval" {
			u.scripts += calls
		}
		if topLevel[cmd] {
			u.usec += usec
		}
	}
	return u
}

func (u usage) minus(v usage) usage {
	return usage{cpu: u.cpu - v.cpu, calls: u.calls - v.calls, scripts: u.scripts - v.scripts, usec: u.usec - v.usec}
}

// cost is what a server spent on one run of a load.
type cost struct {
	usage
	n    int           // operations
	wall time.Duration // the run's length
}

// perOp is CPU µs an operation; less the server's idle CPU over the run when
// idle (CPU seconds a second) is given.
func (c cost) perOp(idle float64) float64 {
	return (c.cpu - idle*c.wall.Seconds()) * 1e6 / float64(c.n)
}

// share is the server's CPU over the run, in seconds a second: its share of
// one thread.
func (c cost) share() float64 { return c.cpu / c.wall.Seconds() }

// report puts the cost's figures on b: CPU and command time an operation,
// commands and scripts an operation, the rate reached and the server's share
// of a thread.
func (c cost) report(b *testing.B, idle float64) {
	n := float64(c.n)
	b.ReportMetric(c.perOp(idle), "cpu-µs/op")
	b.ReportMetric(c.usec/n, "cmd-µs/op")
	b.ReportMetric(float64(c.calls)/n, "cmds/op")
	b.ReportMetric(float64(c.scripts)/n, "scripts/op")
	b.ReportMetric(n/c.wall.Seconds(), "op/s")
	b.ReportMetric(100*c.share(), "thread-%")
}

func (c cost) String() string {
	return fmt.Sprintf("%d ops in %s: %.1f CPU µs, %.1f command µs, %.1f commands, %.2f scripts an op; %.1f %% of a thread",
		c.n, c.wall.Round(time.Millisecond), c.perOp(0), c.usec/float64(c.n), float64(c.calls)/float64(c.n),
		float64(c.scripts)/float64(c.n), 100*c.share())
}

// drive runs op(i) for i in [0, n) from clients goroutines at once, paced at
// rate operations a second in all (operation i not before i/rate after the
// start; 0: as fast as they go), and returns how long it took.
func drive(clients, n int, rate float64, op func(i int)) time.Duration {
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
				}
				op(i)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// measure drives the load and returns what each server spent on it.
func measure(tb testing.TB, servers []*redis.Client, clients, n int, rate float64, op func(i int)) []cost {
	tb.Helper()
	before := make([]usage, len(servers))
	for i, c := range servers {
		before[i] = usageOf(tb, c)
	}
	wall := drive(clients, n, rate, op)
	out := make([]cost, len(servers))
	for i, c := range servers {
		out[i] = cost{usage: usageOf(tb, c).minus(before[i]), n: n, wall: wall}
	}
	return out
}

// idleCPU is the server's CPU seconds a second while nobody calls it (its
// cron, and a replica's pings when it has one).
func idleCPU(tb testing.TB, c *redis.Client, d time.Duration) float64 {
	tb.Helper()
	before := usageOf(tb, c)
	time.Sleep(d)
	return usageOf(tb, c).minus(before).cpu / d.Seconds()
}

// queueBuyers fills the room's queue with n buyers, as n joins before its
// sale would leave it (ZADD, 10,000 a command), and returns their ids.
func queueBuyers(tb testing.TB, rdb redis.Cmdable, key string, n int) []string {
	tb.Helper()
	buyers := make([]string, n)
	for i := range buyers {
		buyers[i] = ids.New()
	}
	for i := 0; i < n; i += 10_000 {
		members := make([]redis.Z, 0, 10_000)
		for _, m := range buyers[i:min(i+10_000, n)] {
			members = append(members, redis.Z{Score: rand.Float64(), Member: m})
		}
		if err := rdb.ZAdd(context.Background(), key, members...).Err(); err != nil {
			tb.Fatal(err)
		}
	}
	return buyers
}
