package ratelimit

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Riders: one more step in the script of a request's buckets.
//
// A hold is decided by hold-buyer (a bucket) and counted in flight by
// buyer-concurrency (a lease in internal/concurrency's sorted set of the
// buyer). Each was a Redis round trip of its own; a Rider puts the lease into
// the script that decides the buckets, so that the request pays one. Its key
// must share the hash slot of the buckets it rides with: a hash tag of the
// same identity (Definition.Tag), such as {buyer:8812} for hold-buyer's bucket
// and the buyer's leases.
//
// The rider runs only when no enforcing bucket refused, after they were
// decided and before any is charged; when it refuses (its Lua's first number
// is not 1), no bucket of its script is charged, and the request's leased
// tokens go back to their leases, as when a bucket refuses. On a cluster,
// when the request's buckets are in several slots, it rides with the group in
// its own slot (run last, so that a refusal by another group comes first), or
// alone after them when no bucket is in its slot; with no bucket to decide in
// Redis at all (every one off, leased or refused from the denial cache before
// it), it runs alone, unless the request was refused.

// RiderScript is a rider's Lua, made once with NewRiderScript.
type RiderScript struct {
	script *redis.Script
}

// NewRiderScript makes the script of a rider whose Lua is body: the body of a
// function of k (the rider's key), argv (its arguments, a table of strings)
// and now (Redis's clock in µs, read once for the whole script), which
// returns an array of integers whose first is 1 when it allows the request
// and 0 when it refuses it. body must not touch any key but k.
func NewRiderScript(body string) *RiderScript {
	return &RiderScript{script: redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local function rider(k, argv, now)
` + body + `
end
local nb = #KEYS - 1
` + bucketsDecide + `if veto then
  out[nb + 2] = 0
  return out
end
local argv = {}
for i = 3*nb + 1, #ARGV do argv[#argv + 1] = ARGV[i] end
local r = rider(KEYS[#KEYS], argv, now)
out[nb + 2] = 1
for i = 1, #r do out[nb + 2 + i] = r[i] end
if r[1] ~= 1 then return out end
for k, nt in pairs(new) do
  redis.call('SET', k, nt, 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
end
return out
`)}
}

// Rider is one request's rider: its script, key and arguments, given by its
// owner, and what it decided, filled by Limiter.AllowWith.
type Rider struct {
	Script *RiderScript
	Key    string
	Args   []any

	// Ran is true when the rider ran in Redis; Reply is then what its Lua
	// returned. It did not run when the request was refused before it (a
	// bucket, a lease of tokens or the denial cache), or when Redis could not
	// answer (Err).
	Ran   bool
	Reply []int64
	// Err is the error of the Redis call that was to run it.
	Err error
}

// refused reports whether the rider ran and refused the request.
func (r *Rider) refused() bool {
	return r != nil && r.Ran && (len(r.Reply) == 0 || r.Reply[0] != 1)
}

// runRider runs the script of s.bs (of one slot, on a cluster) with the
// rider r, fills r, s.now and s.stored (Redis's clock, then what each bucket
// held, 0 when missing), and returns what the buckets held.
func (s *script) runRider(ctx context.Context, r *Rider) ([]int64, error) {
	s.keys, s.args = s.keys[:0], s.args[:0]
	s.appendBuckets()
	s.keys = append(s.keys, r.Key)
	s.args = append(s.args, r.Args...)
	var err error
	s.stored, err = int64s(r.Script.script.Run(ctx, s.rdb, s.keys, s.args...), s.stored[:0])
	clear(s.args)
	if err != nil {
		return nil, err
	}
	nb := len(s.bs)
	if len(s.stored) < 2+nb {
		return nil, fmt.Errorf("ratelimit: rider script returned %d numbers for %d buckets", len(s.stored), nb)
	}
	s.now = s.stored[0]
	r.Ran = s.stored[1+nb] == 1
	r.Reply = append(r.Reply[:0], s.stored[2+nb:]...)
	return s.stored[1 : 1+nb], nil
}

// rideAlone runs the rider with no bucket, under the guard of its key's node.
func (l *Limiter) rideAlone(ctx context.Context, r *Rider) {
	sc := getScript(l.rdb, nil, nil)
	sc.rider = r
	r.Err = l.nodes.For(ctx, r.Key).Do(ctx, sc.fn)
	putScript(sc)
}
