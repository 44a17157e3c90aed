package ratelimit

import (
	"context"
	"fmt"
	"strconv"

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
local out, new, veto = {now}, {}, false
for i = 1, #KEYS do
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
if not veto then
  for k, nt in pairs(new) do
    redis.call('SET', k, nt, 'PX', math.ceil((nt - now) / 1000) + ` + keyMargin + `)
  end
end
return out
`)

// refundScript gives one token back to each bucket in KEYS (ARGV[i] is its interval
// in µs), capped at a full bucket, which is a missing key.
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

// take runs takeScript once for bs (keys of one hash slot, on a cluster) and returns
// Redis's clock in µs and a verdict a bucket, replayed from what the script read.
func take(ctx context.Context, rdb Scripter, bs []bucket) (int64, []verdict, error) {
	keys := make([]string, len(bs))
	args := make([]any, 0, 3*len(bs))
	for i, b := range bs {
		keys[i] = b.key
		if b.args == nil {
			b.args = scriptArgs(b.interval, b.tau, b.enforce)
		}
		args = append(args, b.args[:]...)
	}
	reply, err := takeScript.Run(ctx, rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, nil, err
	}
	if len(reply) != 1+len(bs) {
		return 0, nil, fmt.Errorf("ratelimit: take script returned %d numbers for %d buckets", len(reply), len(bs))
	}
	now, stored := reply[0], reply[1:]
	vs := decide(bs, now, false,
		func(i int, _ string) (int64, bool) { return stored[i], stored[i] != 0 },
		func(string, int64) {})
	return now, vs, nil
}

// scriptArgs returns the ARGV of one bucket for takeScript.
func scriptArgs(interval, tau int64, enforce bool) *[3]any {
	flag := "0"
	if enforce {
		flag = "1"
	}
	return &[3]any{strconv.FormatInt(interval, 10), strconv.FormatInt(tau, 10), flag}
}

// refund runs refundScript for bs (keys of one hash slot, on a cluster).
func refund(ctx context.Context, rdb Scripter, bs []bucket) error {
	keys := make([]string, len(bs))
	args := make([]any, len(bs))
	for i, b := range bs {
		keys[i], args[i] = b.key, b.interval
	}
	return refundScript.Run(ctx, rdb, keys, args...).Err()
}
