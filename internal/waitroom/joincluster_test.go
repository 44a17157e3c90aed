package waitroom

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// BenchmarkJoinsOnCluster is the joins of docs/scaling.md's crowd run ("A
// crowd of 20,000 waiting beside the sale": 740 a second, before the sale)
// on a private 3+3 Redis Cluster, as make cluster has it, without the HTTP
// and the instances: for each master it reports CPU µs a join (INFO cpu, the
// whole process, its idle CPU taken off), command time, commands and scripts
// a join, and its share of a thread; the room's master is "room", the others
// "other-1" and "other-2".
//
//	room-join/740      the room's join alone, 740 a second
//	join-request/740   a join request's whole Redis traffic (joinRequests:
//	                   queue-join's bucket and the buyer-concurrency lease, in
//	                   slots of their own spread over the masters, and the room)
//	join-request/5000  the same at the stadium's peak
//
// Not run by go test; it takes about a minute:
//
//	go test -run '^$' -bench JoinsOnCluster ./internal/waitroom/
func BenchmarkJoinsOnCluster(b *testing.B) {
	c := testenv.StartCluster(b)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, Protocol: 2, PoolSize: 100})
	b.Cleanup(func() { rdb.Close() })
	s := New(rdb, Options{Timeout: 5 * time.Second})
	j := newJoinRequests(b, rdb, s)
	ev := event.Info{ID: ids.New(), OnSaleAt: time.Now().Add(time.Hour).Truncate(time.Microsecond).UTC(),
		WaitingRoom: &event.WaitingRoom{AdmitPerSecond: peakRate}}
	r, _ := roomOf(ev)
	roomMaster := c.MasterOf(b, s.roomKey(r))
	var masters []*redis.Client
	names := []string{"room"}
	for _, addr := range c.Masters(b) {
		m := redis.NewClient(&redis.Options{Addr: addr})
		b.Cleanup(func() { m.Close() })
		if addr == roomMaster {
			masters = append([]*redis.Client{m}, masters...)
		} else {
			masters = append(masters, m)
			names = append(names, fmt.Sprintf("other-%d", len(names)))
		}
	}
	// Every script loaded on every master, and the room's script run once,
	// before anything is counted.
	for range 100 {
		j.join(ev, ids.New())
	}
	idle := make([]float64, len(masters))
	for i, m := range masters {
		idle[i] = idleCPU(b, m, 3*time.Second)
	}

	run := func(name string, rate float64, seconds int, op func(int)) {
		b.Run(name, func(b *testing.B) {
			costs := measure(b, masters, 100, int(rate)*seconds, rate, op)
			for i, cst := range costs {
				b.ReportMetric(cst.perOp(idle[i]), names[i]+"-cpu-µs/join")
				b.ReportMetric(100*cst.share(), names[i]+"-thread-%")
				b.Logf("%s (%s): %s; idle %.2f %% of a thread", names[i], masters[i].Options().Addr, cst, 100*idle[i])
			}
			b.ReportMetric(costs[0].usec/float64(costs[0].n), "room-cmd-µs/join")
			b.ReportMetric(float64(costs[0].calls)/float64(costs[0].n), "room-cmds/join")
		})
	}
	run("room-join/740", 740, 10, func(int) {
		if _, err := s.Join(context.Background(), ev, ids.New()); err != nil {
			b.Error(err)
		}
	})
	run("join-request/740", 740, 10, func(int) { j.join(ev, ids.New()) })
	run("join-request/5000", peakJoins, 5, func(int) { j.join(ev, ids.New()) })
}
