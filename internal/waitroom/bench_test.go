package waitroom

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// BenchmarkStatusWhileQueued is a poll of a room in full swing: 10,000 buyers
// queued before the opening, 50 admitted a second, the polls far more often
// than admissions. Besides the round trip it reports Redis's own time a call
// (redis-µs/call, from INFO commandstats): the room's whole cost on its node,
// one slot per event. The room is on a redis-server of its own, so that the
// counts are its alone.
//
//	go test -run '^$' -bench StatusWhileQueued ./internal/waitroom/
func BenchmarkStatusWhileQueued(b *testing.B) {
	ctx := context.Background()
	rdb := privateClient(b, 2)
	s := New(rdb, Options{Timeout: 5 * time.Second, Admission: time.Minute})
	ev := roomEvent(50, time.Now().Add(2*time.Second))
	buyers := make([]string, 10_000)
	for i := range buyers {
		buyers[i] = ids.New()
		if _, err := s.Join(ctx, ev, buyers[i]); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(time.Until(ev.OnSaleAt) + 100*time.Millisecond)
	before := scriptMicros(b, rdb)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := s.Status(ctx, ev, buyers[5000+i%5000]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.StopTimer()
	after := scriptMicros(b, rdb)
	b.ReportMetric((after.usec-before.usec)/float64(after.calls-before.calls), "redis-µs/call")
}

type scriptStats struct {
	calls int64
	usec  float64
}

// scriptMicros sums Redis's calls and time of EVAL and EVALSHA so far.
func scriptMicros(b *testing.B, rdb redis.UniversalClient) scriptStats {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var st scriptStats
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
			continue
		}
		for _, field := range strings.Split(strings.TrimSpace(line[strings.Index(line, ":")+1:]), ",") {
			k, v, _ := strings.Cut(field, "=")
			switch k {
			case "calls":
				n, _ := strconv.ParseInt(v, 10, 64)
				st.calls += n
			case "usec":
				n, _ := strconv.ParseFloat(v, 64)
				st.usec += n
			}
		}
	}
	if st.calls == 0 {
		b.Fatalf("no script calls in INFO commandstats: %q", info)
	}
	return st
}
