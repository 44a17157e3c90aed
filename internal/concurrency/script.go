package concurrency

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// acquireScript takes a lease on one identity's sorted set, on Redis's clock.
//
// KEYS[1]: the set (lease id → expiry in ms since 1970).
// ARGV: max, lease ms, lease id, '1' to take the lease whatever the count
// (shadow mode).
//
// It runs acquireLease on them, with Redis's clock in ms.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local k, argv = KEYS[1], ARGV
` + acquireLease)

// acquireLease is the body of acquireScript and of acquireRider: it takes a
// lease on the set k, whose ARGV is argv, at nowms (Redis's clock, in ms).
//
// It drops the leases that have expired, then adds this one when fewer than
// max are left (or always, for shadow), and keeps the key alive at least as
// long as its newest lease, so that an idle identity costs no memory. It
// returns {1 if the lease was taken else 0, the live leases before it}. Run
// twice with one lease id (a client that retries after losing the first
// reply), it answers the second time as the first.
const acquireLease = `
local ttl = tonumber(argv[2])
redis.call('ZREMRANGEBYSCORE', k, '-inf', nowms)
local n = redis.call('ZCARD', k)
if redis.call('ZSCORE', k, argv[3]) then
  n = n - 1
elseif n >= tonumber(argv[1]) and argv[4] ~= '1' then
  return {0, n}
end
redis.call('ZADD', k, nowms + ttl, argv[3])
if redis.call('PTTL', k) < ttl then
  redis.call('PEXPIRE', k, ttl)
end
return {1, n}
`

// renewScript moves the expiry of some leases of one set to a lease's time to
// live from now, on Redis's clock. A lease already removed (released, or
// expired and dropped by another request) is not taken again: its place may
// have been given away.
//
// KEYS[1]: the set. ARGV: lease ms, then the lease ids.
// It returns, for each id, 1 if renewed, 0 if the lease was gone.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local k, ttl = KEYS[1], tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  if redis.call('ZSCORE', k, ARGV[i]) then
    redis.call('ZADD', k, now + ttl, ARGV[i])
    out[i - 1] = 1
  else
    out[i - 1] = 0
  end
end
if redis.call('PTTL', k) < ttl then
  redis.call('PEXPIRE', k, ttl)
end
return out
`)

// acquire runs acquireScript: whether the lease was taken, and how many live
// leases the identity had before.
func acquire(ctx context.Context, rdb redis.Scripter, key, id string, limit int, leaseMS int64, shadow bool) (bool, int64, error) {
	always := "0"
	if shadow {
		always = "1"
	}
	v, err := acquireScript.Run(ctx, rdb, []string{key}, limit, leaseMS, id, always).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("concurrency: acquire script returned %d numbers, want 2", len(v))
	}
	return v[0] == 1, v[1], nil
}

// renewKeys renews the leases of several sets served by one node, in one
// pipelined round (and a second for the sets whose script the node did not
// have yet). It returns, for each set, which of its leases were still there.
func renewKeys(ctx context.Context, rdb redis.UniversalClient, leaseMS int64, sets []leaseSet) ([][]bool, error) {
	argv := func(s leaseSet) []any {
		args := make([]any, 0, 1+len(s.leases))
		args = append(args, leaseMS)
		for _, ls := range s.leases {
			args = append(args, ls.id)
		}
		return args
	}
	cmds := make([]*redis.Cmd, len(sets))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range sets {
			cmds[i] = renewScript.EvalSha(ctx, p, []string{s.key}, argv(s)...)
		}
		return nil
	})
	if err != nil {
		var missing []int // sets whose node did not have the script
		for i, c := range cmds {
			if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
				missing = append(missing, i)
			} else if c.Err() != nil {
				return nil, c.Err()
			}
		}
		if len(missing) == 0 {
			return nil, err
		}
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range missing {
				cmds[i] = renewScript.Eval(ctx, p, []string{sets[i].key}, argv(sets[i])...)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	out := make([][]bool, len(sets))
	for i, c := range cmds {
		v, err := c.Int64Slice()
		if err != nil {
			return nil, err
		}
		if len(v) != len(sets[i].leases) {
			return nil, fmt.Errorf("concurrency: renew script returned %d numbers, want %d", len(v), len(sets[i].leases))
		}
		out[i] = make([]bool, len(v))
		for j, x := range v {
			out[i][j] = x == 1
		}
	}
	return out, nil
}
