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

// keyMargin is how long the keys outlive the last admission's end.
const keyMargin = 5 * time.Minute

// roomScript is every operation on a room: it walks the admissions up to now,
// then does ARGV[1] ('join', 'status' or 'progress') for buyer ARGV[2].
//
// KEYS: queue (zset), state (hash n, last), admissions (hash buyer → tick).
// ARGV: op, buyer, on_sale_at (µs), rate (per s), admission length (µs),
// lottery score in [0, 1), key margin (µs).
//
// Times are ticks of 1/rate µs since on_sale_at: one admission is 10⁶ ticks.
// It returns {now µs, admitted n, queued, kind, a, b}: kind 0 not queued,
// 1 waiting (a = position, b = µs until admission), 2 admitted (a = admitted
// until, µs), 3 lapsed (a = admitted until, µs). Keep doc.go in step.
var roomScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local q, st, adm = KEYS[1], KEYS[2], KEYS[3]
local op, buyer = ARGV[1], ARGV[2]
local onsale, rate, admitlen = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local step = 1000000
local nowt = (now - onsale) * rate
local n = tonumber(redis.call('HGET', st, 'n')) or 0
local last = tonumber(redis.call('HGET', st, 'last')) or 0
local len = redis.call('ZCARD', q)
if n > len then n = len end
local dirty = false

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
      n, last, budget, dirty = n + 1, at, budget - 1, true
      if budget == 0 then return end
    end
  end
end

local function ends(at) return onsale + at / rate + admitlen end

advance()
local rank = redis.call('ZRANK', q, buyer)
if op == 'join' then
  if rank and rank < n then
    local at = tonumber(redis.call('HGET', adm, buyer))
    if not at or ends(at) <= now then
      redis.call('ZREM', q, buyer)
      redis.call('HDEL', adm, buyer)
      n, len, rank, dirty = n - 1, len - 1, nil, true
    end
  end
  if not rank then
    local score = tonumber(ARGV[6])
    if now >= onsale then
      score = now
      local top = redis.call('ZRANGE', q, -1, -1, 'WITHSCORES')
      if top[2] and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
    end
    redis.call('ZADD', q, num(score), buyer)
    len, dirty = len + 1, true
    advance()
    rank = redis.call('ZRANK', q, buyer)
  end
end

if dirty then
  redis.call('HSET', st, 'n', n, 'last', num(last))
  local final = last + (len - n) * step
  local expire = onsale + final / rate + admitlen + tonumber(ARGV[7])
  if expire < now + admitlen then expire = now + admitlen end
  local ms = math.floor(expire / 1000) + 1
  redis.call('PEXPIREAT', q, ms)
  redis.call('PEXPIREAT', st, ms)
  redis.call('PEXPIREAT', adm, ms)
end

local out = {now, n, len, 0, 0, 0}
if op == 'progress' or not rank then return out end
if rank < n then
  local at = tonumber(redis.call('HGET', adm, buyer))
  if not at then return out end
  local untilus = ends(at)
  out[4], out[5] = 3, math.floor(untilus)
  if untilus > now then out[4] = 2 end
else
  local ahead = rank - n + 1
  local eta = onsale + (last + ahead * step) / rate
  out[4], out[5], out[6] = 1, ahead, math.max(0, math.ceil(eta - now))
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
	now              time.Time
	admitted, queued int
	kind             int64
	a, b             int64
}

// run runs roomScript for op on the room's keys.
// roomKey is the key of a room's queue; all of the room's keys share its slot.
func (s *Service) roomKey(r room) string { return s.prefix + "wr:{" + r.eventID + "}:q" }

func (s *Service) run(ctx context.Context, r room, op, buyerID string) (reply, error) {
	p := s.prefix + "wr:{" + r.eventID + "}:"
	keys := []string{p + "q", p + "s", p + "a"}
	args := []any{op, buyerID, r.onSaleAt.UnixMicro(), r.rate, s.admission.Microseconds(),
		strconv.FormatFloat(s.lottery(), 'g', -1, 64), keyMargin.Microseconds()}
	v, err := roomScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return reply{}, err
	}
	if len(v) != 6 {
		return reply{}, fmt.Errorf("waitroom: script returned %d numbers, want 6", len(v))
	}
	return reply{now: time.UnixMicro(v[0]).UTC(), admitted: int(v[1]), queued: int(v[2]),
		kind: v[3], a: v[4], b: v[5]}, nil
}
