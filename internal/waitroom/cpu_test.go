package waitroom

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// The stadium's peak (docs/scaling.md, "A stadium on paper"), a second.
const (
	peakJoins      = 5_000  // joins
	peakProgress   = 160    // progress reads: 16 instances, at most 10 each
	peakRate       = 400    // admissions
	peakLookups    = 400    // lookups of one buyer, at the admission rate
	peakHoldChecks = 10_600 // holds' admission checks: 600 admitted buyers' and 10,000 bots'
	// The same once each instance remembers a refusal for a second: the 200
	// bots' checks are at most a call a second on each of 16 instances.
	peakRememberedChecks = 600 + 200*16
)

// BenchmarkRoomCPU is BenchmarkRoomAtAMillion's room (1,000,000 buyers queued
// before the sale, admitting 400 a second) measured by the CPU of its
// redis-server (INFO cpu: used_cpu_user + used_cpu_sys, the whole process, its
// network reads and writes and its replication included), not by command time
// alone: each kind of call is driven at the stadium's peak rate for it, from
// many clients at once (a pool as big as the clients), so that each call
// costs its own system calls as it would on the room's master, where calls
// arrive one by one rather than in a saturated server's batches. Its
// figures are CPU µs an operation (cpu-µs/op, the server's idle CPU taken
// off), command time an operation (cmd-µs/op, INFO commandstats of the
// commands sent: a script's covers its own), commands an operation, scripts
// included (cmds/op), and the server's share of one thread over the run
// (thread-%, idle included). Every operation is an item unless it says
// otherwise:
//
//	join-early/no-replica  a join before the sale, into the million, before
//	                       the server has a replica
//	join-early             the same with a replica in sync (all that follow have one)
//	join-early/saturated   the same, as fast as 100 clients go
//	join-request-early     a join request's whole Redis traffic, all on this
//	                       server: queue-join's bucket, the buyer-concurrency
//	                       lease (taken and given back) and the room's join
//	progress               a progress read with nothing to admit
//	admit                  the sale: progress reads at 160 a second admitting
//	                       400 buyers a second (cpu-µs/admission: the progress
//	                       reads' own CPU taken off)
//	lookup                 one buyer's place, at 400 a second
//	lookup-1000            1,000 buyers' places in one call, 50 a second (cpu-µs/item: a buyer)
//	hold-check             a hold's admission check by a buyer never queued (a bot)
//	join-late              a join after the draw, behind the million
//	join-request-late      a join request's whole traffic, after the draw
//	peak                   everything of the room's at once, at the peak's rates:
//	                       5,000 late joins, 160 progress reads, 400 lookups and
//	                       10,600 holds' checks a second (thread-% is the answer)
//	peak/no-bots           the same without the 10,000 bots' holds' checks
//	peak/k=2               one of two rooms: half the joins, lookups and checks
//	peak/bots-remembered   the peak with refusals remembered for RefusalMemory:
//	                       the bots' checks at most one a second a bot an instance
//
// Not run by go test; it takes about two minutes:
//
//	go test -run '^$' -bench RoomCPU ./internal/waitroom/
func BenchmarkRoomCPU(b *testing.B) {
	ctx := context.Background()
	primary, replica := testenv.StartPrivateRedis(b), testenv.StartPrivateRedis(b)
	rdb := redis.NewClient(&redis.Options{Addr: primary.Addr, Protocol: 2, PoolSize: 200})
	b.Cleanup(func() { rdb.Close() })
	server := []*redis.Client{rdb}
	s := New(rdb, Options{Timeout: 5 * time.Second})
	j := newJoinRequests(b, rdb, s)

	const queued = 1_000_000
	ev := event.Info{ID: ids.New(), OnSaleAt: time.Now().Add(time.Hour).Truncate(time.Microsecond).UTC(),
		WaitingRoom: &event.WaitingRoom{AdmitPerSecond: peakRate}}
	r, _ := roomOf(ev)
	buyers := queueBuyers(b, rdb, s.roomKey(r), queued)
	// A small room whose every buyer is admitted: its progress reads have
	// nothing to admit.
	done := roomEvent(1000, time.Now().Add(-time.Hour))
	for range 10 {
		if _, err := s.Join(ctx, done, ids.New()); err != nil {
			b.Fatal(err)
		}
	}
	idle := idleCPU(b, rdb, 3*time.Second)
	// note reports a figure the sub-benchmarks do not (a benchmark's own
	// log shows only when it fails), once however often it is run.
	note := func(name string, v float64, unit, format string, args ...any) {
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(v, unit)
			if b.N == 1 {
				b.Logf(format, args...)
			}
		})
	}
	note("idle/no-replica", 100*idle, "thread-%", "%d buyers queued; the server idle: %.2f %% of a thread", queued, 100*idle)

	must := func(err error) { // from the clients' goroutines too
		if err != nil {
			b.Error(err)
		}
	}
	costs := map[string]cost{}
	// each drives n calls of op from clients at rate a second and reports
	// their cost (per item too, when an operation is items things).
	each := func(name string, clients, n int, rate float64, items int, op func(i int)) cost {
		var c cost
		b.Run(name, func(b *testing.B) {
			c = measure(b, server, clients, n, rate, op)[0]
			c.report(b, idle)
			if items > 1 {
				b.ReportMetric(c.perOp(idle)/float64(items), "cpu-µs/item")
			}
			b.Logf("%s: %s", name, c)
		})
		costs[name] = c
		return c
	}
	join := func(ev event.Info) func(int) {
		return func(int) {
			_, err := s.Join(ctx, ev, ids.New())
			must(err)
		}
	}
	const clients, seconds = 100, 5

	each("join-early/no-replica", clients, peakJoins*seconds, peakJoins, 1, join(ev))
	attachReplica(b, replica.Addr, primary.Addr)
	idle = idleCPU(b, rdb, 3*time.Second)
	note("idle", 100*idle, "thread-%", "with a replica in sync, the server idle: %.2f %% of a thread", 100*idle)
	each("join-early", clients, peakJoins*seconds, peakJoins, 1, join(ev))
	each("join-early/saturated", clients, 3*peakJoins*seconds, 0, 1, join(ev)) // over a second: run once
	each("join-request-early", clients, peakJoins*seconds, peakJoins, 1, func(int) { j.join(ev, ids.New()) })
	progress := each("progress", 16, peakProgress*seconds, peakProgress, 1, func(int) {
		_, err := s.Progress(ctx, done)
		must(err)
	})

	// The sale opens now: progress reads admit the lottery's buyers, 400 a second.
	open := ev
	open.OnSaleAt = time.Now().Truncate(time.Microsecond).UTC()
	r.onSaleAt = open.OnSaleAt
	p0, err := s.Progress(ctx, open)
	must(err)
	admit := each("admit", 16, peakProgress*seconds, peakProgress, 1, func(int) {
		_, err := s.Progress(ctx, open)
		must(err)
	})
	p1, err := s.Progress(ctx, open)
	must(err)
	admitted := p1.Admitted - p0.Admitted
	perAdmission := (admit.perOp(idle) - progress.perOp(idle)) * float64(admit.n) / float64(admitted)
	note("admit/per-admission", perAdmission, "cpu-µs/admission",
		"admit: %d admissions in %s, %.1f CPU µs an admission (the progress reads' own taken off)",
		admitted, admit.wall.Round(time.Millisecond), perAdmission)

	queuedBuyer := func(int) string { return buyers[rand.IntN(queued)] }
	each("lookup", 16, peakLookups*seconds, peakLookups, 1, func(i int) {
		_, err := s.call(ctx, r, "status", queuedBuyer(i))
		must(err)
	})
	each("lookup-1000", 4, 100, 50, 1000, func(int) {
		batch := make([]string, 1000)
		for k := range batch {
			batch[k] = queuedBuyer(k)
		}
		_, err := s.call(ctx, r, "status", batch...)
		must(err)
	})
	holdCheck := func(int) {
		_, err := s.call(ctx, r, "status", ids.New())
		must(err)
	}
	each("hold-check", 2*clients, peakHoldChecks*seconds, peakHoldChecks, 1, holdCheck)
	each("join-late", clients, peakJoins*seconds, peakJoins, 1, join(open))
	each("join-request-late", clients, peakJoins*seconds, peakJoins, 1, func(int) { j.join(open, ids.New()) })

	// Everything at once, each at its own rate, from clients of its own: the
	// peak, the peak without the bots' holds' checks, and one of k = 2 rooms
	// (half of the joins, lookups and checks; as many progress reads).
	peak := func(name string, share float64, checks float64) {
		b.Run(name, func(b *testing.B) {
			paced := func(clients int, rate float64, op func(int)) func() {
				n := int(rate * share * seconds)
				return func() { drive(clients, n, rate*share, op) }
			}
			before := usageOf(b, rdb)
			start := time.Now()
			var wg sync.WaitGroup
			wg.Go(paced(clients, peakJoins, join(open)))
			wg.Go(func() {
				drive(16, peakProgress*seconds, peakProgress, func(int) {
					_, err := s.Progress(ctx, open)
					must(err)
				})
			})
			wg.Go(paced(16, peakLookups, func(i int) {
				_, err := s.call(ctx, r, "status", queuedBuyer(i))
				must(err)
			}))
			if checks > 0 {
				wg.Go(paced(2*clients, checks, holdCheck))
			}
			wg.Wait()
			c := cost{usage: usageOf(b, rdb).minus(before), n: seconds, wall: time.Since(start)}
			b.ReportMetric(100*c.share(), "thread-%")
			b.ReportMetric(c.usec/1e4/c.wall.Seconds(), "cmd-thread-%")
			b.Logf("%s: %.1f %% of a thread (command time: %.1f %%) for %s",
				name, 100*c.share(), c.usec/1e4/c.wall.Seconds(), c.wall.Round(time.Millisecond))
		})
	}
	peak("peak", 1, peakHoldChecks)
	peak("peak/no-bots", 1, 0)
	peak("peak/k=2", 0.5, peakHoldChecks)
	peak("peak/bots-remembered", 1, peakRememberedChecks)

	// The room's master at the peak, from the figures of one kind at a time.
	us := func(name string) float64 { return costs[name].perOp(idle) }
	sum := peakJoins*us("join-late") + peakProgress*progress.perOp(idle) + peakRate*perAdmission +
		peakLookups*us("lookup") + peakHoldChecks*us("hold-check") + idle*1e6
	note("sum", sum/1e4, "thread-%", "the room's master at the peak, each kind alone at its rate, summed: "+
		"%.0f ms of CPU a second = %d joins × %.1f + %d progress × %.1f + %d admissions × %.1f + "+
		"%d lookups × %.1f + %d holds' checks × %.1f + idle %.0f",
		sum/1e3, peakJoins, us("join-late"), peakProgress, progress.perOp(idle), peakRate, perAdmission,
		peakLookups, us("lookup"), peakHoldChecks, us("hold-check"), idle*1e6)
	rider := us("join-request-early") - us("join-early")
	note("join-request/buckets-and-lease", rider, "cpu-µs/op",
		"a join request's bucket and lease: %.1f CPU µs (early) and %.1f (late), on whichever masters their slots are",
		rider, us("join-request-late")-us("join-late"))
}

// attachReplica makes the server at replicaAddr a replica of the one at
// primaryAddr and waits until the primary counts it online.
func attachReplica(tb testing.TB, replicaAddr, primaryAddr string) {
	tb.Helper()
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: replicaAddr})
	defer rc.Close()
	// The replica loads its copy from the socket, not through a file (which
	// would be written in the package's folder).
	if err := rc.ConfigSet(ctx, "repl-diskless-load", "on-empty-db").Err(); err != nil {
		tb.Fatal(err)
	}
	host, port, _ := strings.Cut(primaryAddr, ":")
	if err := rc.ReplicaOf(ctx, host, port).Err(); err != nil {
		tb.Fatal(err)
	}
	pc := redis.NewClient(&redis.Options{Addr: primaryAddr})
	defer pc.Close()
	testenv.Eventually(tb, 2*time.Minute, func() bool {
		info, err := pc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "state=online")
	}, "the replica on "+replicaAddr+" online")
}

// joinRequests plays what POST /v1/events/{id}/queue sends Redis
// (internal/httpapi/routes.go): queue-join's bucket on the buyer and the event
// (its own slot), the buyer's lease in flight (buyer-concurrency, in the slot
// of {buyer:<id>}), the room's join, and the lease given back (ZREM).
type joinRequests struct {
	tb    testing.TB
	s     *Service
	rl    *ratelimit.Limiter
	inFly *concurrency.Limiter
}

func newJoinRequests(tb testing.TB, rdb redis.UniversalClient, s *Service) *joinRequests {
	rl := ratelimit.New(rdb, ratelimit.Options{Timeout: 5 * time.Second, Limits: []ratelimit.Definition{{
		Name: limits.QueueJoin, Setting: ratelimit.Setting{Limit: ratelimit.PerMinute(5), Mode: ratelimit.Enforce},
		Policy: ratelimit.FailOpen}}})
	inFly := concurrency.New(rdb, concurrency.Options{Name: limits.BuyerConcurrency, Max: 5, Tag: limits.BuyerTag,
		Timeout: 5 * time.Second})
	return &joinRequests{tb: tb, s: s, rl: rl, inFly: inFly}
}

// join is one join request's Redis traffic, in the order the server sends it.
func (j *joinRequests) join(ev event.Info, buyer string) {
	ctx := context.Background()
	d := j.rl.Allow(ctx, ratelimit.Check{Limit: limits.QueueJoin, Key: buyer + ":" + ev.ID})
	if !d.Allowed || d.Results[0].Outcome != ratelimit.OutcomeAllowed {
		j.tb.Errorf("queue-join: %+v", d.Results)
		return
	}
	in, release := j.inFly.Enter(ctx, buyer)
	defer release()
	if in.Outcome != concurrency.OutcomeAllowed {
		j.tb.Errorf("buyer-concurrency: %+v", in)
		return
	}
	if _, err := j.s.Join(ctx, ev, buyer); err != nil {
		j.tb.Error(err)
	}
}
