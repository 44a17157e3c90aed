package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Scripter is the part of a Redis client the limiter uses: running Lua scripts.
// *redis.Client and *redis.ClusterClient satisfy it (it is redis.Scripter); a
// wrapper around either does too (set Options.SplitBySlot for a wrapped cluster
// client).
//
// Build the client with ContextTimeoutEnabled, so that Options.Timeout cuts a
// slow read short. A client that retries after a network error (MaxRetries) may
// run a decision twice when the first run did reach Redis: the bucket is then
// charged two tokens for one request. Set MaxRetries: -1 where that matters
// more than a lost decision (which fails open or falls back).
type Scripter interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
}

var (
	_ Scripter = (*redis.Client)(nil)
	_ Scripter = (*redis.ClusterClient)(nil)
)

// keyMargin is added to every key's time to live, past the instant its bucket is
// full again (when a missing key would mean the same).
const keyMargin = "1000" // ms

// bucketsDecide is the Lua that decides the first nb buckets of KEYS (ARGV:
// three figures each), shared by takeScript and a rider's script: it sets out
// to now and each bucket's TAT before, new to the TAT of each bucket that
// allows, and veto when an enforcing bucket refuses. It writes nothing.
const bucketsDecide = `local out, new, veto = {now}, {}, false
for i = 1, nb do
  local k = KEYS[i]
  local tat = tonumber(redis.call('GET', k)) or 0
  out[i + 1] = tat
  local tau = tonumber(ARGV[3*i-1])
  if tat > now + tau then tat = now + tau - tonumber(ARGV[3*i-2]) end
  local base = new[k] or tat
  if base < now then base = now end
  local nt = base + tonumber(ARGV[3*i-2])
  if nt - now <= tau then
    new[k] = nt
  elseif ARGV[3*i] == '1' then
    veto = true
  end
end
`

// takeScript decides one request against every bucket in KEYS, all or nothing,
// on Redis's clock. ARGV holds three figures a bucket: its interval and tau in
// microseconds, and 1 when it enforces (0 for shadow). A bucket allows when
// max(TAT, now) + interval − now ≤ tau, where a stored TAT beyond now + tau (which
// only a change of the limit, or a clock stepping back, leaves) is first taken as
// now + tau − interval: the next request passes, and the bucket goes on under its
// new setting; unless an enforcing bucket refuses, every
// bucket that allows gets TAT = max(TAT, now) + interval and a time to live that
// ends keyMargin after it is full. This is decide in gcra.go; keep them in step.
//
// It returns now and the TAT each bucket held before (0 when missing), from which
// take replays decide in Go for the figures of the reply: the script does the
// least it must while Redis waits for it.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local nb = #KEYS
` + bucketsDecide + `if not veto then
  for k, nt in pairs(new) do
    redis.call('SET', k, nt, 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
  end
end
return out
`)

// takeOneScript is takeScript for one bucket alone, the commonest decision, with
// nothing a lone bucket does not need (no loop, no table of new TATs, no flag:
// a lone refusal writes nothing, enforcing or not). ARGV is its interval and tau.
// Keep it in step with takeScript.
var takeOneScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1])) or 0
local iv, tau = tonumber(ARGV[1]), tonumber(ARGV[2])
local base = tat
if base > now + tau then base = now + tau - iv end
if base < now then base = now end
local nt = base + iv
if nt - now <= tau then
  redis.call('SET', KEYS[1], nt, 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
end
return {now, tat}
`)

// leaseScript takes up to ARGV[3] tokens at once from the bucket KEYS[1] (ARGV[1]
// and ARGV[2] are its interval and tau in µs): as many as it holds, none when it
// is empty. The TAT moves on by interval for each token taken; a TAT beyond
// now + tau is clamped first, as in takeScript, so a limit change applies at once.
// It returns now, the TAT it read (0 when missing) and the tokens taken.
var leaseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local stored = tonumber(redis.call('GET', KEYS[1])) or 0
local iv, tau, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local base = stored
if base > now + tau then base = now + tau - iv end
if base < now then base = now end
local n = math.floor((now + tau - base) / iv)
if n > want then n = want end
if n > 0 then
  local nt = base + n * iv
  redis.call('SET', KEYS[1], nt, 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
else
  n = 0
end
return {now, stored, n}
`)

// refundScript gives back ARGV[i] µs of tokens to the bucket KEYS[i] (its interval
// for one token, n·interval for n), capped at a full bucket, which is a missing key.
var refundScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
for i = 1, #KEYS do
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if tat then
    local nt = tat - tonumber(ARGV[i])
    if nt <= now then
      redis.call('DEL', KEYS[i])
    else
      redis.call('SET', KEYS[i], string.format('%d', nt), 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
    end
  end
end
return 0
`)

// scripts are the scripts not in use, so that their buffers serve the next
// decision.
var scripts = sync.Pool{New: func() any { return newScript(nil) }}

// getScript returns a script of rdb for bs, whose verdicts go to vs (len(bs),
// zero). Give it back with putScript once vs and now are read.
func getScript(rdb Scripter, bs []bucket, vs []verdict) *script {
	s := scripts.Get().(*script)
	s.rdb, s.bs, s.vs = rdb, bs, vs
	return s
}

func putScript(s *script) {
	s.rdb, s.bs, s.vs, s.rider = nil, nil, nil, nil
	scripts.Put(s)
}

// script is one run of the take script: its buckets and their verdicts, and the
// buffers of its arguments and reply, reused from one decision to the next
// (scripts) so that a decision allocates next to nothing of its own. fn is run,
// bound once, so that handing it to the guard allocates no closure.
type script struct {
	rdb    Scripter
	bs     []bucket  // the buckets of this run
	vs     []verdict // their verdicts, len(bs), zero before the run
	now    int64     // Redis's clock in µs, from the run
	keys   []string
	args   []any
	stored []int64
	rider  *Rider // rides in this run's script, when set (rider.go)
	fn     func(context.Context) error
}

func newScript(rdb Scripter) *script {
	s := &script{rdb: rdb}
	s.fn = s.run
	return s
}

// run decides s.bs in Redis, all or nothing, and fills s.vs and s.now (and
// s.rider, when one rides).
func (s *script) run(ctx context.Context) error {
	if s.rider != nil {
		stored, err := s.runRider(ctx, s.rider)
		if err != nil {
			return err
		}
		decide(s.bs, s.vs, s.now, s.rider.refused(),
			func(i int, _ string) (int64, bool) { return stored[i], stored[i] != 0 },
			func(string, int64) {})
		return nil
	}
	s.keys, s.args = s.keys[:0], s.args[:0]
	var cmd *redis.Cmd
	if len(s.bs) == 1 {
		b := &s.bs[0]
		s.keys = append(s.keys, b.key)
		one := b.one
		if one == nil {
			one = oneArgs(b.interval, b.tau)
		}
		cmd = takeOneScript.Run(ctx, s.rdb, s.keys, one[:]...)
	} else {
		s.appendBuckets()
		cmd = takeScript.Run(ctx, s.rdb, s.keys, s.args...)
	}
	clear(s.args) // let the strings go with the next decision's
	var err error
	if s.stored, err = int64s(cmd, s.stored[:0]); err != nil {
		return err
	}
	if len(s.stored) != 1+len(s.bs) {
		return fmt.Errorf("ratelimit: take script returned %d numbers for %d buckets", len(s.stored), len(s.bs))
	}
	s.now = s.stored[0]
	stored := s.stored[1:]
	decide(s.bs, s.vs, s.now, false,
		func(i int, _ string) (int64, bool) { return stored[i], stored[i] != 0 },
		func(string, int64) {})
	return nil
}

// appendBuckets appends each bucket's key to s.keys and its ARGV of
// takeScript (three a bucket) to s.args.
func (s *script) appendBuckets() {
	for i := range s.bs {
		b := &s.bs[i]
		s.keys = append(s.keys, b.key)
		args := b.args
		if args == nil {
			args = scriptArgs(b.interval, b.tau, b.enforce)
		}
		s.args = append(s.args, args[:]...)
	}
}

// int64s appends the integers of a script's array reply to buf, without the
// slice that Cmd.Int64Slice would make.
func int64s(cmd *redis.Cmd, buf []int64) ([]int64, error) {
	val, err := cmd.Result()
	if err != nil {
		return buf, err
	}
	items, ok := val.([]any)
	if !ok {
		return buf, fmt.Errorf("ratelimit: script returned %T, not an array", val)
	}
	for _, it := range items {
		n, ok := it.(int64)
		if !ok {
			return buf, fmt.Errorf("ratelimit: script returned %T in its array, not an integer", it)
		}
		buf = append(buf, n)
	}
	return buf, nil
}

// scriptArgs returns the ARGV of one bucket for takeScript.
func scriptArgs(interval, tau int64, enforce bool) *[3]any {
	flag := "0"
	if enforce {
		flag = "1"
	}
	return &[3]any{strconv.FormatInt(interval, 10), strconv.FormatInt(tau, 10), flag}
}

// oneArgs returns the ARGV of a lone bucket for takeOneScript.
func oneArgs(interval, tau int64) *[2]any {
	return &[2]any{strconv.FormatInt(interval, 10), strconv.FormatInt(tau, 10)}
}

// refund runs refundScript for bs (keys of one hash slot, on a cluster), one token
// a bucket.
func refund(ctx context.Context, rdb Scripter, bs []bucket) error {
	keys := make([]string, len(bs))
	args := make([]any, len(bs))
	for i, b := range bs {
		keys[i], args[i] = b.key, b.interval
	}
	return refundScript.Run(ctx, rdb, keys, args...).Err()
}

// leaseTake runs leaseScript: it takes up to want tokens of the bucket key and
// returns Redis's clock, the TAT it read (0 when missing) and the tokens taken.
func leaseTake(ctx context.Context, rdb Scripter, key string, interval, tau, want int64) (now, stored, got int64, err error) {
	var buf [3]int64
	reply, err := int64s(leaseScript.Run(ctx, rdb, []string{key}, interval, tau, want), buf[:0])
	if err != nil {
		return 0, 0, 0, err
	}
	if len(reply) != 3 {
		return 0, 0, 0, fmt.Errorf("ratelimit: lease script returned %d numbers, not 3", len(reply))
	}
	return reply[0], reply[1], reply[2], nil
}

// giveBack runs refundScript for n tokens of one bucket.
func giveBack(ctx context.Context, rdb Scripter, key string, n, interval int64) error {
	return refundScript.Run(ctx, rdb, []string{key}, n*interval).Err()
}
