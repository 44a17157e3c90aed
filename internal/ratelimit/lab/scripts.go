package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The lab's four algorithms, each one Lua script: it reads, decides and writes
// in one go, so no two callers can both take the last request, and no crash can
// leave half of a decision behind. Each takes the time from redis.call('TIME'),
// never from the caller: the instances that share a limit have clocks that
// differ. Every script gets KEYS[1], the key's state, and ARGV = limit, window
// (ms), cost (the requests decided at once, 1 for one request), and returns
// {allowed (1 or 0), a figure of its state}.

// labScript is a lab script of body, run after the lines every one starts
// with: its ARGV read as limit, win and cost, and now, Redis's clock in ms (t
// is the TIME it was read from).
func labScript(body string) *redis.Script {
	return redis.NewScript(`
local limit = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
` + body)
}

// fixedWindowScript counts the requests of the current window in one counter
// that expires at the window's end. The windows are aligned on Redis's clock
// (every multiple of the window since the epoch), so every key's counter resets
// at the same instant: the boundary.
var fixedWindowScript = labScript(`
local n = redis.call('INCRBY', KEYS[1], cost)
if n == cost then
  redis.call('PEXPIRE', KEYS[1], win - now % win)
end
if n > limit then return {0, n} end
return {1, n}
`)

// slidingLogScript remembers the instant of every request admitted in the last
// window, in a sorted set: exact, and as large as the limit. Members are the
// admission's instant in µs (consecutive µs for a cost above 1), scores its ms.
var slidingLogScript = labScript(`
local us = t[1] * 1000000 + t[2]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
local n = redis.call('ZCARD', KEYS[1])
if n + cost > limit then return {0, n} end
local args = {}
for i = 1, cost do
  args[#args + 1] = now
  args[#args + 1] = string.format('%.0f', us + i - 1)
  if #args == 200 or i == cost then
    redis.call('ZADD', KEYS[1], unpack(args))
    args = {}
  end
end
redis.call('PEXPIRE', KEYS[1], win)
return {1, n + cost}
`)

// slidingCounterScript keeps two counts, the current window's and the
// previous one's, and estimates the last window's requests as the previous
// count weighted by the share of it still in view, plus the current count.
// Windows are aligned on Redis's clock, as the fixed window's.
var slidingCounterScript = labScript(`
local idx = math.floor(now / win)
local elapsed = now - idx * win
local d = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
local w, c, p = tonumber(d[1]), tonumber(d[2]) or 0, tonumber(d[3]) or 0
if w == nil or w < idx - 1 then
  c, p = 0, 0
elseif w == idx - 1 then
  c, p = 0, c
end
local est = p * (win - elapsed) / win + c
if est + cost > limit then return {0, math.floor(est)} end
c = c + cost
redis.call('HSET', KEYS[1], 'w', idx, 'c', c, 'p', p)
redis.call('PEXPIRE', KEYS[1], 2 * win)
return {1, c}
`)

// tokenBucketScript is the lab's own token bucket (lesson 13, section 13.3),
// with a cost added: a bucket of capacity limit, refilled steadily at limit per
// window. There are no window boundaries, so no cliff to exploit; a burst is
// allowed, but capped by exactly the bucket's capacity.
var tokenBucketScript = labScript(`
local cap, k = limit, KEYS[1]
local d = redis.call('HMGET', k, 'tokens', 'ts')
local tokens = tonumber(d[1])
local ts     = tonumber(d[2])
if tokens == nil then
  tokens = cap
  ts = now
end
local delta = now - ts
if delta < 0 then delta = 0 end
tokens = math.min(cap, tokens + delta * cap / win)
local ttl = win * 2
if tokens < cost then
  redis.call('HSET', k, 'tokens', tokens, 'ts', now)
  redis.call('PEXPIRE', k, ttl)
  return {0, 0}
end
tokens = tokens - cost
redis.call('HSET', k, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', k, ttl)
return {1, math.floor(tokens)}
`)

// scriptLimiter is one of the lab's scripts bound to a limit.
type scriptLimiter struct {
	rdb    redis.UniversalClient
	script *redis.Script
	prefix string
	limit  int
	window int64 // ms
}

// scriptNew returns the constructor of a limiter running script.
func scriptNew(script *redis.Script) func(redis.UniversalClient, string, Limit) (Limiter, error) {
	return func(rdb redis.UniversalClient, prefix string, l Limit) (Limiter, error) {
		if l.N < 1 || l.Window < time.Millisecond {
			return nil, fmt.Errorf("lab: bad limit %s", l)
		}
		return &scriptLimiter{rdb: rdb, script: script, prefix: prefix, limit: l.N, window: l.Window.Milliseconds()}, nil
	}
}

func (s *scriptLimiter) Allow(ctx context.Context, key string) (bool, error) {
	return s.AllowN(ctx, key, 1)
}

func (s *scriptLimiter) AllowN(ctx context.Context, key string, n int) (bool, error) {
	r, err := s.script.Run(ctx, s.rdb, []string{s.prefix + key}, s.limit, s.window, n).Int64Slice()
	if err != nil {
		return false, err
	}
	return len(r) > 0 && r[0] == 1, nil
}

func (s *scriptLimiter) Prepare(ctx context.Context) error {
	return s.script.Load(ctx, s.rdb).Err()
}

func (s *scriptLimiter) Queue(ctx context.Context, pipe redis.Pipeliner, key string, n int) {
	s.script.EvalSha(ctx, pipe, []string{s.prefix + key}, s.limit, s.window, n)
}

// twoCommands is the limiter most often found on line, and wrong: INCR, then
// EXPIRE when the counter is new, as two commands. A process that dies between
// them leaves a counter without a time to live: that key's user is refused
// forever. crash, when it returns true, simulates that death: EXPIRE is not sent.
type twoCommands struct {
	rdb    redis.UniversalClient
	prefix string
	limit  int64
	ttl    time.Duration
	crash  func() bool
}

func (c *twoCommands) Allow(ctx context.Context, key string) (bool, error) {
	n, err := c.rdb.Incr(ctx, c.prefix+key).Result()
	if err != nil {
		return false, err
	}
	if n == 1 {
		if c.crash != nil && c.crash() {
			return false, errCrashed // the process died here
		}
		if err := c.rdb.Expire(ctx, c.prefix+key, c.ttl).Err(); err != nil {
			return false, err
		}
	}
	return n <= c.limit, nil
}

// errCrashed is the simulated death of the process between two commands.
var errCrashed = fmt.Errorf("lab: simulated crash")

// rawIncr is no limiter: one INCR a request, the cheapest thing a Redis limiter
// could do, the speed experiment's baseline.
type rawIncr struct {
	rdb    redis.UniversalClient
	prefix string
}

func (r rawIncr) Allow(ctx context.Context, key string) (bool, error) {
	return true, r.rdb.Incr(ctx, r.prefix+key).Err()
}
