package ratelimit

// The arithmetic of one decision, in Go. The in-process buckets decide with it;
// the Lua script in script.go makes the same decision and writes, and take then
// replays decide on what the script read, for the figures of the reply. Keep the
// two in step.
//
// A bucket is stored as one number, its theoretical arrival time (TAT): the instant,
// in microseconds, at which the bucket will be full again. A missing TAT, or one in
// the past, is a full bucket. With interval = period/rate and tau = burst·interval,
// the tokens in the bucket at now are (now + tau − max(TAT, now)) / interval, and a
// request that takes one token moves TAT to max(TAT, now) + interval, which is
// allowed when the new TAT is at most now + tau. This is exactly a token bucket of
// burst tokens refilled at rate/period, kept in one integer.

// bucket is one bucket a request must pass.
type bucket struct {
	key      string
	interval int64   // µs per token
	tau      int64   // µs to fill an empty bucket: burst·interval
	enforce  bool    // false for a shadow bucket, whose refusal vetoes nothing
	args     *[3]any // the script's ARGV for the bucket, made once per setting
	one      *[2]any // takeOneScript's ARGV, for the bucket alone
}

// verdict is what one bucket says about one request; durations in microseconds.
type verdict struct {
	allowed   bool  // the bucket had a token for the request
	spent     bool  // the token was taken (allowed, and no enforcing bucket refused)
	remaining int64 // whole tokens left after the decision, never negative
	reset     int64 // µs until the bucket is full again
	retry     int64 // µs until the request would be allowed; 0 when allowed
	base      int64 // max(TAT, now): where the bucket stood before the request
}

// pending returns the TAT that bucket i would see if an earlier bucket of the same
// request has the same key and allowed: the same key twice in one request.
func pending(bs []bucket, vs []verdict, i int) (int64, bool) {
	for j := i - 1; j >= 0; j-- {
		if bs[j].key == bs[i].key && vs[j].allowed {
			return vs[j].base + bs[j].interval, true
		}
	}
	return 0, false
}

// decide decides one request against all of its buckets at now, all or nothing,
// into vs (one zero verdict a bucket): when an enforcing bucket refuses, or veto
// is set, no bucket is written. get reads the stored TAT of bucket i (ok false
// when missing); set stores one.
//
// A stored TAT beyond now + tau, which no charge under the setting of now can
// leave (only a change of the limit, or a clock stepping back), is taken as
// now + tau − interval: the next request passes, and the bucket goes on under
// its new setting. That is what makes a limit change apply at once: a key
// drained under 1/1m owes a minute, and after the limit is raised to 1000/1s
// it passes at once.
func decide(bs []bucket, vs []verdict, now int64, veto bool, get func(i int, key string) (int64, bool), set func(key string, tat int64)) {
	for i := range bs {
		b := &bs[i]
		tat, ok := pending(bs, vs, i)
		if !ok {
			if tat, ok = get(i, b.key); !ok {
				tat = now
			}
			if tat > now+b.tau {
				tat = now + b.tau - b.interval
			}
		}
		base := max(tat, now)
		vs[i].base = base
		if base+b.interval-now <= b.tau {
			vs[i].allowed = true
		} else if b.enforce {
			veto = true
		}
	}
	for i := range bs {
		b := &bs[i]
		base, v := vs[i].base, &vs[i]
		if v.allowed && !veto {
			next := base + b.interval
			set(b.key, next)
			v.spent = true
			v.remaining = (now + b.tau - next) / b.interval
			v.reset = next - now
			continue
		}
		v.remaining = max(0, floorDiv(now+b.tau-base, b.interval))
		v.reset = base - now
		if !v.allowed {
			v.retry = base + b.interval - b.tau - now
		}
	}
}

// floorDiv is a/b rounded toward minus infinity, as Lua's math.floor(a/b), b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
