package ratelimit

import (
	"context"
	"fmt"
	"slices"
)

// Allow decides one request against every limit named in checks, all or nothing:
// when any enforcing limit refuses, no token is spent from any bucket of the
// request. It never returns an error: Redis failing is handled by each limit's
// Policy and counted. It panics when a check names no defined limit, which is a
// programming error.
//
// In order:
//
//   - an Off limit is counted off and not evaluated;
//   - an Enforce limit whose key this instance refused until a time still to come
//     refuses again at once, without Redis (the denial cache); the request's other
//     limits are then skipped;
//   - a leased limit (Policy Leased) spends a token this instance leased, and
//     leases a batch when it has none (see lease.go); when it refuses, the
//     request's other limits are skipped;
//   - the Enforce and Shadow limits left are decided together by one Lua script
//     in Redis, under a deadline and a circuit breaker; when they refuse, the
//     leased tokens go back to their leases;
//   - when Redis cannot answer, a FailOpen limit allows and a Fallback limit asks
//     its in-process bucket.
//
// On a Redis Cluster (a *redis.ClusterClient, or Options.SplitBySlot) the buckets
// of one request are usually in different hash slots, and a script may only touch
// one slot. There the limiter runs one script per slot, in the order of the
// checks, and stops at the first refusal (the limits after it are skipped); the
// tokens that the earlier slots spent are then given back by a refund script,
// capped at a full bucket, so a refused request still costs no token. Between
// the spend and the refund another request may see one token fewer; and if the
// refund itself fails, that token is lost until the bucket refills.
func (l *Limiter) Allow(ctx context.Context, checks ...Check) Decision {
	return l.AllowWith(ctx, nil, checks...)
}

// AllowWith is Allow with a rider (rider.go): another package's step run in
// the same Redis script as the request's buckets, so that the request pays one
// round trip for both. It runs only when no limit refused the request before
// it; when it refuses, no bucket of the request is charged. It fills rider:
// whether it ran, what it said, or the error of its call. A nil rider is
// Allow.
func (l *Limiter) AllowWith(ctx context.Context, rider *Rider, checks ...Check) Decision {
	start := l.now()
	d := Decision{Allowed: true, Results: make([]Result, len(checks))}
	// A request has a few checks: these live on the stack unless it has more.
	var statesBuf [4]*limitState
	var cfgsBuf [4]*limitConfig
	var remoteBuf, leasedBuf [4]int
	states, cfgs := statesBuf[:0], cfgsBuf[:0]
	if len(checks) > len(statesBuf) {
		states, cfgs = make([]*limitState, 0, len(checks)), make([]*limitConfig, 0, len(checks))
	}
	states, cfgs = states[:len(checks)], cfgs[:len(checks)]
	remote, leased := remoteBuf[:0], leasedBuf[:0]
	cached := false
	for i, c := range checks {
		st := l.limits[c.Limit]
		if st == nil {
			panic(fmt.Sprintf("ratelimit: Allow: no limit named %q", c.Limit))
		}
		cfg := st.cfg.Load()
		states[i], cfgs[i] = st, cfg
		r := &d.Results[i]
		*r = Result{Limit: c.Limit, Key: c.Key, Setting: cfg.setting, Allowed: true}
		switch cfg.setting.Mode {
		case Off:
			r.Outcome = OutcomeOff
			continue
		case Enforce:
			if den, ok := cfg.denials.get(c.Key, start); ok {
				r.Outcome, r.Allowed, r.Cached = OutcomeDenied, false, true
				r.RetryAfter = micros(den.until - start)
				r.ResetAfter = micros(max(0, den.reset-start))
				cached = true
				continue
			}
			if cfg.leases != nil {
				leased = append(leased, i)
				continue
			}
		}
		remote = append(remote, i)
	}
	if !cached && len(leased) > 0 {
		cached = !l.decideLeased(ctx, start, checks, cfgs, leased, d.Results)
	}
	if cached {
		for _, i := range remote {
			d.Results[i].Outcome = OutcomeSkipped
		}
		for _, i := range leased {
			if d.Results[i].Outcome == "" { // not decided: a cached denial came first
				d.Results[i].Outcome = OutcomeSkipped
			}
		}
	} else {
		if len(remote) > 0 {
			l.decideRemote(ctx, start, checks, cfgs, remote, d.Results, rider)
		} else if rider != nil {
			l.rideAlone(ctx, rider)
		}
		if refused(d.Results, remote) || rider.refused() {
			for _, i := range leased {
				if d.Results[i].Outcome == OutcomeAllowed {
					cfgs[i].leases.putBack(checks[i].Key)
				}
			}
		}
	}
	for i := range d.Results {
		r := &d.Results[i]
		if !r.Allowed {
			d.Allowed = false
			d.RetryAfter = max(d.RetryAfter, r.RetryAfter)
		}
		if k := outcomeIndex(r.Outcome); k >= 0 {
			states[i].counts[k].Inc()
		}
	}
	return d
}

// The state of one bucket in decideRemote.
const (
	unasked = iota // not asked: an earlier slot refused
	answered
	failed
)

// decideRemote decides the checks at idx in Redis, falling back by policy, and
// fills their results; the rider, when there is one, rides with the buckets
// in its slot, else alone after them.
func (l *Limiter) decideRemote(ctx context.Context, start int64, checks []Check, cfgs []*limitConfig, idx []int, res []Result, rider *Rider) {
	bs := make([]bucket, len(idx))
	for j, i := range idx {
		c := cfgs[i]
		bs[j] = bucket{key: l.key(checks[i].Limit, checks[i].Key), interval: c.interval, tau: c.tau,
			enforce: c.setting.Mode == Enforce, args: c.args, one: c.one}
	}
	var groups [][]int // nil: one group of every bucket
	if l.split && len(bs) > 1 {
		if groups = groupBySlot(bs); len(groups) == 1 {
			groups = nil
		}
	}

	ridesWith := riderGroup(l.split, bs, groups, rider) // the rider's group is then the last; -1: alone

	vs := make([]verdict, len(bs))
	state := make([]int8, len(bs))
	veto := false
	var spent [][]int // groups that spent tokens
	for n := range max(1, len(groups)) {
		if veto {
			break
		}
		g, gb := all(len(bs)), bs
		if groups != nil {
			g = groups[n]
			gb = pick(bs, g)
		}
		// Each slot's call has a deadline of its own, under its node's breaker: a
		// dead node costs its own buckets, never the time of a healthy node's.
		got := vsOf(vs, g, groups != nil)
		sc := getScript(l.rdb, gb, got)
		if n == ridesWith {
			sc.rider = rider
		}
		err := l.nodes.For(ctx, gb[0].key).Do(ctx, sc.fn)
		putScript(sc)
		if n == ridesWith {
			rider.Err = err
			veto = veto || rider.refused()
		}
		for k, j := range g {
			if err != nil {
				state[j] = failed
				continue
			}
			state[j] = answered
			if groups != nil {
				vs[j] = got[k]
			}
			veto = veto || (!got[k].allowed && bs[j].enforce)
		}
		if err == nil && len(got) > 0 && spentAny(got) {
			spent = append(spent, g)
		}
	}

	// Redis could not answer for these: the Fallback limits that enforce ask the
	// in-process buckets, all or nothing, unless the request is refused already.
	var local []int
	for j := range bs {
		if state[j] == failed && bs[j].enforce && l.limits[checks[idx[j]].Limit].policy.fallback() {
			local = append(local, j)
		}
	}
	if len(local) > 0 {
		for k, v := range l.local.take(pick(bs, local), start, veto) {
			vs[local[k]] = v
			veto = veto || !v.allowed
		}
	}
	if rider != nil && ridesWith < 0 && !veto {
		l.rideAlone(ctx, rider)
		veto = rider.refused()
	}
	if veto && len(spent) > 0 {
		l.refund(ctx, bs, vs, spent)
	}

	for j, i := range idx {
		r, v := &res[i], vs[j]
		switch {
		case state[j] == unasked:
			r.Outcome = OutcomeSkipped
			continue
		case state[j] == failed && !slices.Contains(local, j):
			r.Outcome = OutcomeFailOpen
			continue
		}
		r.Remaining, r.ResetAfter, r.RetryAfter = int(v.remaining), micros(v.reset), micros(v.retry)
		switch {
		case state[j] == failed && v.allowed:
			r.Outcome = OutcomeFallbackAllowed
		case state[j] == failed:
			r.Outcome, r.Allowed = OutcomeFallbackDenied, false
		case v.allowed:
			r.Outcome = OutcomeAllowed
		case bs[j].enforce:
			r.Outcome, r.Allowed = OutcomeDenied, false
			cfgs[i].denials.put(checks[i].Key, denial{until: start + v.retry, reset: start + v.reset}, start)
		default:
			r.Outcome = OutcomeShadowDenied
		}
	}
}

// refund gives back the tokens spent by the groups in spent, one refund script per
// group, and corrects their verdicts. A refund that fails leaves its token spent.
func (l *Limiter) refund(ctx context.Context, bs []bucket, vs []verdict, spent [][]int) {
	ctx = context.WithoutCancel(ctx) // a refund is owed whether or not the caller stays
	for _, g := range spent {
		var back []int
		for _, j := range g {
			if vs[j].spent {
				back = append(back, j)
			}
		}
		err := l.nodes.For(ctx, bs[back[0]].key).Do(ctx, func(rctx context.Context) error {
			return refund(rctx, l.rdb, pick(bs, back))
		})
		if err != nil {
			continue
		}
		for _, j := range back {
			v := &vs[j]
			v.spent = false
			v.remaining = min(v.remaining+1, bs[j].tau/bs[j].interval)
			v.reset = max(0, v.reset-bs[j].interval)
		}
	}
}

// riderGroup is the index of the group of bs the rider rides with, moving
// that group to the end of groups so that it runs last, or -1 when it must
// ride alone (no bucket in its slot, on a cluster) or there is no rider. With
// groups nil (one group of every bucket), it is 0 unless the limiter splits
// by slot and the rider's slot is not the buckets'.
func riderGroup(split bool, bs []bucket, groups [][]int, rider *Rider) int {
	if rider == nil {
		return -1
	}
	if groups == nil {
		if split && hashSlot(rider.Key) != hashSlot(bs[0].key) {
			return -1
		}
		return 0
	}
	slot := hashSlot(rider.Key)
	for n, g := range groups {
		if hashSlot(bs[g[0]].key) == slot {
			last := len(groups) - 1
			copy(groups[n:], groups[n+1:])
			groups[last] = g
			return last
		}
	}
	return -1
}

// all returns 0, 1, …, n−1.
func all(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func pick(bs []bucket, idx []int) []bucket {
	out := make([]bucket, len(idx))
	for k, j := range idx {
		out[k] = bs[j]
	}
	return out
}

func spentAny(vs []verdict) bool {
	for _, v := range vs {
		if v.spent {
			return true
		}
	}
	return false
}

// decideLeased decides the leased checks at idx, in order, and fills their
// results. It returns false when one refused: the tokens the checks before it
// took go back to their leases, and the ones after it are skipped.
func (l *Limiter) decideLeased(ctx context.Context, start int64, checks []Check, cfgs []*limitConfig, idx []int, res []Result) bool {
	for k, i := range idx {
		c, cfg, r := checks[i], cfgs[i], &res[i]
		v := cfg.leases.take(ctx, c.Key, l.key(c.Limit, c.Key), start)
		switch {
		case v.failed && l.limits[c.Limit].policy.fallback():
			b := bucket{key: l.key(c.Limit, c.Key), interval: cfg.interval, tau: cfg.tau, enforce: true}
			lv := l.local.take([]bucket{b}, start, false)[0]
			r.Remaining, r.ResetAfter, r.RetryAfter = int(lv.remaining), micros(lv.reset), micros(lv.retry)
			r.Outcome, r.Allowed = OutcomeFallbackAllowed, lv.allowed
			if !lv.allowed {
				r.Outcome = OutcomeFallbackDenied
			}
		case v.failed:
			r.Outcome = OutcomeFailOpen
		case v.allowed:
			r.Outcome, r.Remaining, r.ResetAfter = OutcomeAllowed, int(v.remaining), micros(v.reset)
		default:
			r.Outcome, r.Allowed = OutcomeDenied, false
			r.RetryAfter, r.ResetAfter = micros(v.retry), micros(v.reset)
			cfg.denials.put(c.Key, denial{until: start + v.retry, reset: start + v.reset}, start)
		}
		if r.Allowed {
			continue
		}
		for _, j := range idx[:k] {
			if res[j].Outcome == OutcomeAllowed {
				cfgs[j].leases.putBack(checks[j].Key)
			}
		}
		for _, j := range idx[k+1:] {
			res[j].Outcome = OutcomeSkipped
		}
		return false
	}
	return true
}

// refused reports whether an enforcing limit at idx refused.
func refused(res []Result, idx []int) bool {
	for _, i := range idx {
		if !res[i].Allowed {
			return true
		}
	}
	return false
}

// vsOf is where one slot's verdicts go: vs itself when the request's buckets
// are one group, else a slice of their own.
func vsOf(vs []verdict, g []int, split bool) []verdict {
	if !split {
		return vs
	}
	return make([]verdict, len(g))
}
