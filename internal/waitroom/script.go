package waitroom

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxSteps is the most admissions one script call makes; a longer backlog is
// caught up by the calls that follow (it never admits anyone early).
const maxSteps = 10_000

// keyMargin is how long the keys outlive the last admission's end, at the
// least (at most twice as long: doc.go).
const keyMargin = 5 * time.Minute

// roomScript is every operation on a room: it walks the admissions up to now,
// then does ARGV[1] ('join', 'status' or 'progress') for the buyers ARGV[7…]
// (join: one; status: any number; progress: none).
//
// KEYS: queue (zset), state (hash n, last, d, x: the keys' expiry in ms as
// last set), admissions (hash buyer → tick).
// ARGV: op, on_sale_at (µs), rate (per s), admission length (µs), lottery
// score in [0, 1), key margin (µs), buyers….
//
// Times are ticks of 1/rate µs since on_sale_at: one admission is 10⁶ ticks.
// d counts the admitted buyers removed from the queue (joined again after
// their admission lapsed), so that rank + d, a buyer's place counting every
// buyer ever admitted, never changes once the lottery is drawn.
//
// It returns {now µs, admitted n, queued, d, early} (early: how many joined
// before the sale, for progress once the sale has opened; else 0) and then
// six numbers a buyer:
// kind, a, b, rank + d, tick, lottery. kind 0 not queued; 1 waiting (a =
// position, b = µs until admission, tick = when she will be admitted); 2
// admitted (a = admitted until, µs; tick = when she was); 3 lapsed (the same).
// lottery is her score × 2⁵³ while the lottery is not drawn (now <
// on_sale_at), else −1. Keep doc.go in step.
var roomScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local q, st, adm = KEYS[1], KEYS[2], KEYS[3]
local op = ARGV[1]
local onsale, rate, admitlen = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local step = 1000000
local nowt = (now - onsale) * rate
local state = redis.call('HMGET', st, 'n', 'last', 'd', 'x')
local n = tonumber(state[1]) or 0
local last = tonumber(state[2]) or 0
local d = tonumber(state[3]) or 0
local x = tonumber(state[4]) -- the keys' expiry as last set (ms), nil to set it anew
local len = redis.call('ZCARD', q)
if n > len then n, x = len, nil end
local dirty = false -- n, last or d changed
local grown = false -- the queue grew: the keys may need to live longer
local wrote = false -- an admission was written: the admissions' hash may be new

local function num(x) return string.format('%.17g', x) end

local function advance()
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
        local joined = (score - onsale) * rate
        if joined > at then at = joined end
      end
      if at > nowt then return end
      redis.call('HSET', adm, batch[i], num(at))
      n, last, budget, dirty, wrote = n + 1, at, budget - 1, true, true
      if budget == 0 then return end
    end
  end
end

local function ends(at) return onsale + at / rate + admitlen end

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

if dirty or grown then
  local margin = tonumber(ARGV[6])
  local final = last + (len - n) * step
  local expire = onsale + final / rate + admitlen + margin
  if expire < now + admitlen then expire = now + admitlen end
  local ms = math.floor(expire / 1000) + 1
  local renew = not x or ms > x
  if renew then x, dirty = ms + math.floor(margin / 1000), true end
  if dirty then redis.call('HSET', st, 'n', n, 'last', num(last), 'd', d, 'x', x) end
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
local out = {now, n, len, d, early}
if op == 'progress' then return out end
for i = 7, #ARGV do
  local buyer = ARGV[i]
  local rank = redis.call('ZRANK', q, buyer)
  local kind, a, b, tick, lottery = 0, 0, 0, 0, -1
  if rank and rank < n then
    local at = tonumber(redis.call('HGET', adm, buyer))
    if at then
      local untilus = ends(at)
      kind, a, tick = 3, math.floor(untilus), at
      if untilus > now then kind = 2 end
    end
  elseif rank then
    local ahead = rank - n + 1
    local eta = onsale + (last + ahead * step) / rate
    kind, a, b, tick = 1, ahead, math.max(0, math.ceil(eta - now)), last + ahead * step
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
	buyers                           []buyerReply
}

// buyerReply is what roomScript says of one buyer.
type buyerReply struct {
	kind       int64
	a, b       int64
	rank, tick int64
	lottery    int64
}

// roomKey is the key of a room's queue; all of the room's keys share its slot.
func (s *Service) roomKey(r room) string { return s.prefix + "wr:{" + r.eventID + "}:q" }

// run runs roomScript for op on the room's keys.
func (s *Service) run(ctx context.Context, r room, op string, buyers []string) (reply, error) {
	p := s.prefix + "wr:{" + r.eventID + "}:"
	keys := []string{p + "q", p + "s", p + "a"}
	args := make([]any, 0, 6+len(buyers))
	args = append(args, op, r.onSaleAt.UnixMicro(), r.rate, s.admission.Microseconds(),
		strconv.FormatFloat(s.lottery(), 'g', -1, 64), keyMargin.Microseconds())
	for _, b := range buyers {
		args = append(args, b)
	}
	v, err := roomScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return reply{}, err
	}
	if len(v) != 5+6*len(buyers) {
		return reply{}, fmt.Errorf("waitroom: script returned %d numbers for %d buyers, want %d", len(v), len(buyers), 5+6*len(buyers))
	}
	rep := reply{now: time.UnixMicro(v[0]).UTC(), admitted: int(v[1]), queued: int(v[2]), removed: int(v[3]), early: int(v[4])}
	for i := 5; i < len(v); i += 6 {
		rep.buyers = append(rep.buyers, buyerReply{kind: v[i], a: v[i+1], b: v[i+2], rank: v[i+3], tick: v[i+4], lottery: v[i+5]})
	}
	return rep, nil
}
