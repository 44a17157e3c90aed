package waitroom

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/protect"
)

// maxSteps is the most admissions one script call makes; a longer backlog is
// caught up by the calls that follow (it never admits anyone early).
const maxSteps = 10_000

// keyMargin is how long the keys outlive the last admission's end, at the
// least (at most twice as long: doc.go).
const keyMargin = 5 * time.Minute

// roomScript is every operation on a room: it walks the admissions up to now,
// then does ARGV[1] ('join', 'status', 'progress' or 'control') for the buyers
// ARGV[7…] (join: one; status: any number; progress: none; control: ARGV[7]
// the new rate, or an empty string to keep it, and ARGV[8] '1' to pause, '0'
// to resume or an empty string to keep).
//
// KEYS: queue (zset), state (hash n, last, d, x: the keys' expiry in ms as
// last set, and the schedule t0, k0, r, p), admissions (hash buyer → when
// she was admitted, µs).
// ARGV: op, on_sale_at (µs), rate (per s, the event's: the room's own r, once
// it is written, wins), admission length (µs), lottery score in [0, 1), key
// margin (µs), buyers….
//
// Times are ticks: one admission is 10⁶ ticks, and the schedule says how
// they run: from t0 (µs; on_sale_at until an operator changed the rate or
// paused) at tick k0 (0 until then), r admissions a second, none while p is
// 1. A change walks the admissions due under the old schedule, then starts
// the new one at now, so that ticks run on without a jump and an admission
// is never made early or twice.
// d counts the admitted buyers removed from the queue (joined again after
// their admission lapsed), so that rank + d, a buyer's place counting every
// buyer ever admitted, never changes once the lottery is drawn.
//
// It returns {now µs, admitted n, queued, d, early, t0, k0, r, p} (early: how
// many joined before the sale, for progress once the sale has opened; else
// 0) and then six numbers a buyer:
// kind, a, b, rank + d, tick, lottery. kind 0 not queued; 1 waiting (a =
// position, b = µs until admission, −1 while paused; tick = when she will be
// admitted); 2 admitted (a = admitted until, µs; tick = when she was); 3
// lapsed (the same).
// lottery is her score × 2⁵³ while the lottery is not drawn (now <
// on_sale_at), else −1. Keep doc.go in step.
var roomScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local q, st, adm = KEYS[1], KEYS[2], KEYS[3]
local op = ARGV[1]
local onsale, admitlen = tonumber(ARGV[2]), tonumber(ARGV[4])
local step = 1000000
local state = redis.call('HMGET', st, 'n', 'last', 'd', 'x', 't0', 'k0', 'r', 'p')
local n = tonumber(state[1]) or 0
local last = tonumber(state[2]) or 0
local d = tonumber(state[3]) or 0
local x = tonumber(state[4]) -- the keys' expiry as last set (ms), nil to set it anew
local t0 = tonumber(state[5]) or onsale
local k0 = tonumber(state[6]) or 0
local rate = tonumber(state[7]) or tonumber(ARGV[3])
local paused = state[8] == '1'
local len = redis.call('ZCARD', q)
if n > len then n, x = len, nil end
local dirty = false -- n, last, d or the schedule changed
local grown = false -- the queue grew: the keys may need to live longer
local wrote = false -- an admission was written: the admissions' hash may be new

local function num(x) return string.format('%.17g', x) end

-- The tick at time t: before a changed schedule's start, its start (every
-- admission due before it was walked when it changed).
local function tickat(t)
  if t < t0 and t0 > onsale then return k0 end
  if paused then return k0 end
  return k0 + (t - t0) * rate
end
-- When tick k comes (k ≥ k0), µs; nil while paused.
local function timeat(k)
  if paused then return nil end
  return t0 + (k - k0) / rate
end
local nowt = tickat(now)

local function advance()
  if paused then return end
  local budget = ` + strconv.Itoa(maxSteps) + `
  while n < len and budget > 0 do
    -- Each admission comes a step after the one before at the earliest: no
    -- more than due are due, and between two admissions none is (most calls).
    local due = math.floor((nowt - last) / step)
    if due < 1 then return end
    local batch = redis.call('ZRANGE', q, n, n + math.min(due, 100) - 1, 'WITHSCORES')
    if #batch == 0 then return end
    for i = 1, #batch, 2 do
      local at = last + step
      local score = tonumber(batch[i + 1])
      if score >= 1 then
        local joined = tickat(score)
        if joined > at then at = joined end
      end
      if at > nowt then return end
      redis.call('HSET', adm, batch[i], num(math.floor(timeat(at))))
      n, last, budget, dirty, wrote = n + 1, at, budget - 1, true, true
      if budget == 0 then return end
    end
  end
end

local function ends(at) return at + admitlen end

advance()
if op == 'join' then
  local buyer = ARGV[7]
  local rank = redis.call('ZRANK', q, buyer)
  if rank and rank < n then
    local at = tonumber(redis.call('HGET', adm, buyer))
    if not at or ends(at) <= now then
      redis.call('ZREM', q, buyer)
      redis.call('HDEL', adm, buyer)
      -- either may have removed its key: every key's expiry is set anew
      n, len, rank, d, dirty, x = n - 1, len - 1, nil, d + 1, true, nil
    end
  end
  if not rank then
    local score = tonumber(ARGV[5])
    if now >= onsale then
      score = now
      local top = redis.call('ZRANGE', q, -1, -1, 'WITHSCORES')
      if top[2] and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
    end
    redis.call('ZADD', q, num(score), buyer)
    len, grown = len + 1, true
    advance()
  end
end

if op == 'control' then
  -- The old schedule's admissions are walked (above); the new one starts now.
  if now > t0 then k0, t0 = nowt, now end
  if ARGV[7] ~= '' then rate = tonumber(ARGV[7]) end
  if ARGV[8] ~= '' then paused = ARGV[8] == '1' end
  nowt, dirty = tickat(now), true
end

if dirty or grown then
  local margin = tonumber(ARGV[6])
  local final = last + (len - n) * step
  -- A paused room keeps its queue for a week.
  local expire = now + 7 * 86400000000
  if not paused then expire = timeat(final) + admitlen + margin end
  if expire < now + admitlen then expire = now + admitlen end
  local ms = math.floor(expire / 1000) + 1
  local renew = not x or ms > x
  if renew then x, dirty = ms + math.floor(margin / 1000), true end
  -- The schedule is kept from the first write on: the event's rate (ARGV[3])
  -- is the one the room opens at, and only a control changes it.
  if dirty then
    redis.call('HSET', st, 'n', n, 'last', num(last), 'd', d, 'x', x,
      't0', num(t0), 'k0', num(k0), 'r', rate, 'p', paused and 1 or 0)
  end
  if renew then
    redis.call('PEXPIREAT', q, x)
    redis.call('PEXPIREAT', st, x)
    redis.call('PEXPIREAT', adm, x)
  elseif wrote then
    redis.call('PEXPIREAT', adm, x)
  end
end

local early = 0
if op == 'progress' and now >= onsale then early = redis.call('ZCOUNT', q, '-inf', '(1') end
local out = {now, n, len, d, early, t0, k0, rate, paused and 1 or 0}
if op == 'progress' or op == 'control' then return out end
for i = 7, #ARGV do
  local buyer = ARGV[i]
  local rank = redis.call('ZRANK', q, buyer)
  local kind, a, b, tick, lottery = 0, 0, 0, 0, -1
  if rank and rank < n then
    local at = tonumber(redis.call('HGET', adm, buyer))
    if at then
      local untilus = ends(at)
      kind, a = 3, math.floor(untilus)
      if untilus > now then kind = 2 end
    end
  elseif rank then
    local ahead = rank - n + 1
    local at = last + ahead * step
    local eta = timeat(at)
    b = -1
    if eta then b = math.max(0, math.ceil(eta - now)) end
    kind, a, tick = 1, ahead, at
    if now < onsale then
      lottery = math.floor(tonumber(redis.call('ZSCORE', q, buyer)) * 9007199254740992)
    end
  end
  local j = #out
  out[j + 1], out[j + 2], out[j + 3], out[j + 4], out[j + 5], out[j + 6] = kind, a, b, (rank or 0) + d, tick, lottery
end
return out
`)

// The kinds of answer roomScript gives about one buyer.
const (
	kindNotQueued = 0
	kindWaiting   = 1
	kindAdmitted  = 2
	kindLapsed    = 3
)

// reply is roomScript's answer, in Go types.
type reply struct {
	now                              time.Time
	admitted, queued, removed, early int
	schedule                         schedule
	buyers                           []buyerReply
}

// header is how many numbers roomScript's answer begins with.
const header = 9

// buyerReply is what roomScript says of one buyer.
type buyerReply struct {
	kind       int64
	a, b       int64
	rank, tick int64
	lottery    int64
}

// roomKey is the key of a room's queue; all of the room's keys share its slot.
func (s *Service) roomKey(r room) string { return s.key(r, "q") }

// key is the room's key of the kind: <prefix>wr:{<event id>}:<kind>, q for
// the queue, s for its state, w for the admissions.
func (s *Service) key(r room, kind string) string {
	return protect.Key(s.prefix, "wr", r.eventID, ":"+kind)
}

// opControl is roomScript's operation that changes a room's schedule.
const opControl = "control"

// run runs roomScript for op on the room's keys, about the buyers (for
// opControl, the rate and the pause).
func (s *Service) run(ctx context.Context, r room, op string, buyers []string) (reply, error) {
	keys := []string{s.key(r, "q"), s.key(r, "s"), s.key(r, "w")}
	args := make([]any, 0, 6+len(buyers))
	args = append(args, op, r.onSaleAt.UnixMicro(), r.rate, s.admission.Microseconds(),
		strconv.FormatFloat(s.lottery(), 'g', -1, 64), keyMargin.Microseconds())
	for _, b := range buyers {
		args = append(args, b)
	}
	n := len(buyers)
	if op == opControl { // its arguments are the rate and the pause
		n = 0
	}
	v, err := roomScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return reply{}, err
	}
	if len(v) != header+6*n {
		return reply{}, fmt.Errorf("waitroom: script returned %d numbers for %d buyers, want %d", len(v), n, header+6*n)
	}
	rep := reply{now: time.UnixMicro(v[0]).UTC(), admitted: int(v[1]), queued: int(v[2]), removed: int(v[3]), early: int(v[4]),
		schedule: schedule{onSale: r.onSaleAt.UnixMicro(), t0: v[5], k0: v[6], rate: v[7], paused: v[8] == 1}}
	for i := header; i < len(v); i += 6 {
		rep.buyers = append(rep.buyers, buyerReply{kind: v[i], a: v[i+1], b: v[i+2], rank: v[i+3], tick: v[i+4], lottery: v[i+5]})
	}
	return rep, nil
}
