package onsale

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// progress writes a line a second to o.Progress until the returned stop is
// called, which writes the last one:
//
//	T+3s    queued 2210  admitted 150  holding 31  sold 212/1000  refused edge=40 hold-buyer=3  5xx 0  no answer 0  done 80/5000  1845 req/s
//
// refused counts the documented refusals (every 429, the documented 503s) by
// what refused them; 5xx counts the others, which are errors.
func progress(o Options, sale Sale, rec *recorder) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last, lastAt := rec.total.Load(), time.Now()
		line := func() {
			total, now := rec.total.Load(), time.Now()
			rate := float64(total-last) / max(now.Sub(lastAt).Seconds(), 1e-3)
			last, lastAt = total, now
			fmt.Fprintln(o.Progress, progressLine(o, sale, rec, now, rate))
		}
		for {
			select {
			case <-tick.C:
				line()
			case <-done:
				line()
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func progressLine(o Options, sale Sale, rec *recorder, now time.Time, rate float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s", tLabel(now.Sub(sale.OnSaleAt)))
	if sale.HasRoom {
		fmt.Fprintf(&b, " queued %d  admitted %d ", rec.queued.Load(), rec.admit.Load())
	}
	fmt.Fprintf(&b, " holding %d  sold %d/%d  refused", rec.holding.Load(), rec.seats.Load(), o.Seats)
	refused := rec.refusals()
	if len(refused) == 0 {
		b.WriteString(" 0")
	}
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		fmt.Fprintf(&b, " %s=%d", name, refused[name])
	}
	fmt.Fprintf(&b, "  5xx %d  no answer %d  done %d/%d  %.0f req/s",
		rec.fivexx.Load(), rec.noAnswer.Load(), rec.done.Load(), o.Buyers, rate)
	return b.String()
}

// tLabel is a moment relative to the opening: T-3s, T+12s.
func tLabel(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		return fmt.Sprintf("T%ds", s)
	}
	return fmt.Sprintf("T+%ds", s)
}
