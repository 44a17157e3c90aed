package shed

import (
	"context"
	"math"
	"runtime/metrics"
	"time"
)

// schedLatencies is the runtime's histogram of the time goroutines spent
// runnable before running, cumulative since the process began.
const schedLatencies = "/sched/latencies:seconds"

// Run samples the signals every Interval and changes the level as they
// require, until ctx ends. Call it once.
func (u *Utilization) Run(ctx context.Context) {
	s := newSampler(u.o.PoolWait, u.o.InFlight)
	interval := u.o.Interval
	next := time.Now().Add(interval)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		lag := now.Sub(next)
		if lag > interval { // ticks were missed: count from now
			next = now
		}
		next = next.Add(interval)
		timer.Reset(time.Until(next))
		u.observe(s.sample(max(lag, 0)))
	}
}

// sampler reads the signals; each call of sample covers the time since the
// last one.
type sampler struct {
	read     []metrics.Sample
	prev     []uint64 // the histogram's counts at the last sample
	poolWait func() (int64, time.Duration)
	waits    int64
	waited   time.Duration
	inFlight func() (int, int)
	lags     [3]time.Duration // the last three lags, the newest at lags[n%3]
	n        int
}

func newSampler(poolWait func() (int64, time.Duration), inFlight func() (int, int)) *sampler {
	s := &sampler{read: []metrics.Sample{{Name: schedLatencies}}, poolWait: poolWait, inFlight: inFlight}
	s.schedP99()
	if poolWait != nil {
		s.waits, s.waited = poolWait()
	}
	return s
}

// sample reads every signal; lag is how late the sampler ran.
func (s *sampler) sample(lag time.Duration) Signals {
	s.lags[s.n%len(s.lags)] = lag
	s.n++
	sig := Signals{SchedP99: s.schedP99(), SamplerLag: median3(s.lags)}
	if s.poolWait != nil {
		waits, waited := s.poolWait()
		if dn, dt := waits-s.waits, waited-s.waited; dn > 0 && dt > 0 {
			sig.PoolWait = dt / time.Duration(dn)
		}
		s.waits, s.waited = waits, waited
	}
	if s.inFlight != nil {
		if n, bound := s.inFlight(); bound > 0 {
			sig.InFlightRatio = float64(n) / float64(bound)
		}
	}
	return sig
}

// schedP99 is the p99 of the scheduling latencies timed since the last call,
// the difference of two readings of the cumulative histogram; 0 on the first
// call and when none were timed.
func (s *sampler) schedP99() time.Duration {
	metrics.Read(s.read)
	if s.read[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s.read[0].Value.Float64Histogram()
	if len(s.prev) != len(h.Counts) {
		s.prev = append(s.prev[:0], h.Counts...)
		return 0
	}
	p := quantile(s.prev, h, 0.99)
	copy(s.prev, h.Counts)
	return p
}

// quantile is the q-quantile of the events h counts beyond prev, as the upper
// bound of the bucket it falls in (the lower bound for the last, unbounded
// bucket); 0 when there are none.
func quantile(prev []uint64, h *metrics.Float64Histogram, q float64) time.Duration {
	var total uint64
	for i, n := range h.Counts {
		if n > prev[i] {
			total += n - prev[i]
		}
	}
	if total == 0 {
		return 0
	}
	need := uint64(math.Ceil(q * float64(total)))
	var sum uint64
	for i, n := range h.Counts {
		if n > prev[i] {
			sum += n - prev[i]
		}
		if sum >= need {
			bound := h.Buckets[i+1]
			if math.IsInf(bound, 1) {
				bound = h.Buckets[i]
			}
			return time.Duration(bound * float64(time.Second))
		}
	}
	return 0
}

// median3 is the median of three durations.
func median3(d [3]time.Duration) time.Duration {
	return max(min(d[0], d[1]), min(max(d[0], d[1]), d[2]))
}
