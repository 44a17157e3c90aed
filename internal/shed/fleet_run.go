package shed

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/protect"
)

// keyTTL is how long the fleet's reports outlive the last one.
const keyTTL = 5 * time.Second

// window is the span of an instance's report of its rates.
const window = time.Second

// usageScript stores this instance's report of its offered rates and returns
// the sum of the reports of every instance heard from within the stale span,
// by Redis's clock; it deletes the others' reports.
//
// KEYS[1]: the hash <prefix>fleet:{usage}, one field per instance: its id →
// "<critical> <normal> <sheddable> <µs of the report>", rates in req/s.
// ARGV: the instance's id; its critical, normal and sheddable rates; the stale
// span (µs); the key's time to live (ms).
// It returns {critical, normal, sheddable, instances}, the rates as strings.
var usageScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local key, stale = KEYS[1], tonumber(ARGV[5])
redis.call('HSET', key, ARGV[1], ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. string.format('%d', now))
redis.call('PEXPIRE', key, ARGV[6])
local all = redis.call('HGETALL', key)
local c, n, s, k = 0, 0, 0, 0
for i = 1, #all, 2 do
  local a, b, d, at = string.match(all[i + 1], '^(%S+) (%S+) (%S+) (%d+)$')
  if at and tonumber(at) > now - stale then
    c, n, s, k = c + tonumber(a), n + tonumber(b), s + tonumber(d), k + 1
  else
    redis.call('HDEL', key, all[i])
  end
end
return {string.format('%.3f', c), string.format('%.3f', n), string.format('%.3f', s), k}
`)

// flushed is one of this instance's flushes: the span its counts cover, and
// the counts.
type flushed struct {
	from, to time.Time
	n        [numClasses]int64
}

// Run flushes this instance's counts and reads the fleet's every Interval,
// until ctx ends. While the mode is Off or the capacity 0 it does not call
// Redis. Call it once.
func (f *Fleet) Run(ctx context.Context) { protect.Every(ctx, f.interval, f.tick) }

// tick is one exchange with Redis and what follows from it.
func (f *Fleet) tick(ctx context.Context) {
	now := time.Now()
	var delta [numClasses]int64
	for _, c := range Classes {
		delta[c] = f.offered[c].Swap(0)
	}
	capacity := f.capacity.Load()
	if f.mode.Load() == protect.Off || capacity == 0 {
		f.reset(now)
		return
	}
	rate, instances, err := f.exchange(ctx, f.ownRate(now, delta))
	switch {
	case err != nil && ctx.Err() != nil:
		return
	case err != nil:
		f.state.Store(failingOpen)
		f.failOpen.Set(1)
		for _, c := range Classes {
			f.ratio[c].Set(1)
		}
		if !f.failing {
			f.failing = true
			f.logger.Warn("load shedder failing open: Redis did not answer, every request is admitted",
				"shedder", string(FleetUsage), "error", err.Error())
		}
		return
	}
	if f.failing {
		f.failing = false
		f.failOpen.Set(0)
		f.logger.Info("load shedder deciding again: Redis answers", "shedder", string(FleetUsage))
	}
	admit, budget := plan(float64(capacity), f.reserve, rate)
	st := &fleetState{admit: admit}
	f.instances.Set(float64(instances))
	for _, c := range Classes {
		f.rate[c].Set(rate[c])
		f.ratio[c].Set(admit[c])
		if admit[c] < 1 {
			st.reason[c] = fmt.Sprintf("the fleet's %s traffic (%.0f req/s) is above its share (%.0f req/s of a capacity of %d req/s)",
				c, rate[c], budget[c], capacity)
		}
	}
	f.state.Store(st)
}

// reset forgets everything Run worked out: everything is admitted, and
// counting starts again at now.
func (f *Fleet) reset(now time.Time) {
	f.state.Store(admitAll)
	f.own = f.own[:0]
	f.since = now
	f.failing = false
	f.failOpen.Set(0)
	f.instances.Set(0)
	for _, c := range Classes {
		f.rate[c].Set(0)
		f.ratio[c].Set(1)
	}
}

// exchange reports this instance's rates and returns the fleet's, and how many
// instances reported, under the deadline and the breaker of the key's node.
func (f *Fleet) exchange(ctx context.Context, own [numClasses]float64) ([numClasses]float64, int, error) {
	var rate [numClasses]float64
	var v []any
	err := f.nodes.For(ctx, f.key).Do(ctx, func(rctx context.Context) error {
		var err error
		v, err = usageScript.Run(rctx, f.rdb, []string{f.key}, f.id,
			formatRate(own[Critical]), formatRate(own[Normal]), formatRate(own[Sheddable]),
			f.stale.Microseconds(), keyTTL.Milliseconds()).Slice()
		return err
	})
	if err != nil {
		return rate, 0, err
	}
	if len(v) != 4 {
		return rate, 0, fmt.Errorf("shed: the fleet usage script returned %d values, want 4", len(v))
	}
	for i, c := range Classes {
		s, _ := v[i].(string)
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return rate, 0, fmt.Errorf("shed: the fleet usage script returned %v as a rate", v[i])
		}
		rate[c] = r
	}
	instances, _ := v[3].(int64)
	return rate, int(instances), nil
}

func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', 3, 64) }

// ownRate records the counts since the last flush and returns this
// instance's offered rate of each class over its last second, in req/s: the
// counts of the flushes that ended within the last second, over the span they
// cover (less than a second just after a reset, so that the rate is right
// from the first flush).
func (f *Fleet) ownRate(now time.Time, delta [numClasses]int64) [numClasses]float64 {
	f.own = append(f.own, flushed{from: f.since, to: now, n: delta})
	f.since = now
	cut := 0
	for cut < len(f.own)-1 && now.Sub(f.own[cut].to) >= window {
		cut++
	}
	f.own = append(f.own[:0], f.own[cut:]...)
	var rate [numClasses]float64
	span := now.Sub(f.own[0].from).Seconds()
	if span <= 0 {
		return rate
	}
	for _, x := range f.own {
		for _, c := range Classes {
			rate[c] += float64(x.n[c])
		}
	}
	for _, c := range Classes {
		rate[c] /= span
	}
	return rate
}

// plan is each class's admission probability and budget (requests a second)
// for a fleet of the capacity offered the rates. Critical is never shed.
// Normal and sheddable share (1 − reserve) × capacity, or what critical
// leaves of the capacity when that is less; normal first, and sheddable gets
// what normal leaves of the share, never less than nothing. A class offered
// more than its budget is admitted with probability budget / offered.
func plan(capacity, reserve float64, rate [numClasses]float64) (admit, budget [numClasses]float64) {
	share := min((1-reserve)*capacity, max(capacity-rate[Critical], 0))
	budget[Critical] = capacity
	budget[Normal] = share
	budget[Sheddable] = max(share-rate[Normal], 0)
	for _, c := range Classes {
		admit[c] = 1
		if c != Critical && rate[c] > budget[c] {
			admit[c] = budget[c] / rate[c]
		}
	}
	return admit, budget
}
