package waitroom

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// BenchmarkRoomAtAMillion is the stadium's room on a redis-server of its
// own: 1,000,000 buyers queued before the sale (loaded with ZADD, as a
// million joins would leave them), admitting 400 a second. Each sub-benchmark
// reports Redis's own time a call (redis-µs/call, INFO commandstats of
// EVALSHA: the room's whole cost on its node) for one kind of call:
//
//	join-early   a join before the sale, into the million
//	catch-up     the first call after the opening, 10 s late: 4,000 admissions
//	             (per item: per admission)
//	progress     a progress read with no admission due (most of them)
//	tick         a progress read 100 ms after the last: 40 admissions due
//	             (20 of them; per item: per admission)
//	lookup-1000  the first polls after the draw: 1,000 buyers' places in one call
//	             (at most 200 of them; per item: per buyer)
//	status       a poll without a token
//	join-late    a join after the draw, behind the million
//
// Not run by go test; it takes about a minute:
//
//	go test -run '^$' -bench RoomAtAMillion -benchtime 2000x ./internal/waitroom/
func BenchmarkRoomAtAMillion(b *testing.B) {
	ctx := context.Background()
	rdb := privateClient(b, 2)
	s := New(rdb, Options{Timeout: 30 * time.Second})
	const queued, rate = 1_000_000, 400
	ev := event.Info{ID: ids.New(), OnSaleAt: time.Now().Add(time.Hour).Truncate(time.Microsecond).UTC(),
		WaitingRoom: &event.WaitingRoom{AdmitPerSecond: rate}}
	r, _ := roomOf(ev)
	buyers := queueBuyers(b, rdb, s.roomKey(r), queued)
	mem, _ := rdb.MemoryUsage(ctx, s.roomKey(r), 100).Result()
	b.Logf("%d buyers queued; the queue takes about %d MB", queued, mem>>20)
	_, err := s.Progress(ctx, roomEvent(1, time.Now())) // a first script call, so that INFO lists EVALSHA
	if err != nil {
		b.Fatal(err)
	}

	// each makes call b.N times, at most limit times, and reports Redis's
	// time a call, and per item when a call does items things.
	each := func(name string, items, limit int, call func(i int)) {
		b.Run(name, func(b *testing.B) {
			before := scriptMicros(b, rdb)
			i := 0
			for b.Loop() {
				if i < limit {
					call(i)
				}
				i++
			}
			after := scriptMicros(b, rdb)
			perCall := (after.usec - before.usec) / float64(after.calls-before.calls)
			b.ReportMetric(perCall, "redis-µs/call")
			if items > 1 {
				b.ReportMetric(perCall/float64(items), "redis-µs/item")
			}
		})
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}

	const many = 1 << 30
	each("join-early", 1, many, func(int) {
		_, err := s.Join(ctx, ev, ids.New())
		must(err)
	})

	// The sale opens: the same room, its opening moved 10 s into the past.
	open := ev
	open.OnSaleAt = time.Now().Add(-10 * time.Second).Truncate(time.Microsecond).UTC()
	var p Progress
	each("catch-up", 10*rate, 1, func(int) {
		var err error
		p, err = s.Progress(ctx, open)
		must(err)
	})
	b.Logf("the first call after the opening admitted %d (%s of admissions)", p.Admitted, 10*time.Second)
	each("progress", 1, many, func(int) {
		_, err := s.Progress(ctx, open)
		must(err)
	})
	each("tick", rate/10, 20, func(int) {
		time.Sleep(100 * time.Millisecond)
		_, err := s.Progress(ctx, open)
		must(err)
	})
	r.onSaleAt = open.OnSaleAt
	each("lookup-1000", 1000, 200, func(int) {
		batch := make([]string, 1000)
		for j := range batch {
			batch[j] = buyers[rand.IntN(queued)]
		}
		_, err := s.call(ctx, r, "status", batch...)
		must(err)
	})
	each("status", 1, many, func(int) {
		_, err := s.Status(ctx, open, buyers[rand.IntN(queued)])
		must(err)
	})
	each("join-late", 1, many, func(int) {
		_, err := s.Join(ctx, open, ids.New())
		must(err)
	})
}
