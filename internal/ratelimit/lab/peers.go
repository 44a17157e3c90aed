package lab

import (
	"context"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// The Go libraries a reader would otherwise pick, as dependencies of the lab
// only. Both build against the go-redis v9 of go.mod; one that did not would be
// left out of peers and named in PeerNote.
var peers = []Algorithm{
	{ID: "redis_rate", Name: "go-redis/redis_rate (GCRA)", Origin: "Go library", New: newRedisRate},
	{ID: "ulule", Name: "ulule/limiter (Redis store)", Origin: "Go library", New: newUlule},
}

// PeerNote says which Go libraries the lab measures and whether each builds
// against this module's go-redis.
const PeerNote = "github.com/go-redis/redis_rate/v10 and github.com/ulule/limiter/v3 (drivers/store/redis) both build against this module's go-redis v9"

// RedisRatePrefix is what go-redis/redis_rate puts before every key it is
// given; Cleanup deletes under it too.
const RedisRatePrefix = "rate:"

// redisRate is github.com/go-redis/redis_rate: GCRA in one Lua script on Redis's
// clock, its state one number (the theoretical arrival time) a key. It writes
// "rate:" + the key it is given.
type redisRate struct {
	lim    *redis_rate.Limiter
	limit  redis_rate.Limit
	prefix string
}

func newRedisRate(rdb redis.UniversalClient, prefix string, l Limit) (Limiter, error) {
	if l.N < 1 || l.Window <= 0 {
		return nil, fmt.Errorf("lab: bad limit %s", l)
	}
	return &redisRate{lim: redis_rate.NewLimiter(rdb), prefix: prefix,
		limit: redis_rate.Limit{Rate: l.N, Burst: l.N, Period: l.Window}}, nil
}

func (r *redisRate) Allow(ctx context.Context, key string) (bool, error) {
	return r.AllowN(ctx, key, 1)
}

func (r *redisRate) AllowN(ctx context.Context, key string, n int) (bool, error) {
	res, err := r.lim.AllowN(ctx, r.prefix+key, r.limit, n)
	if err != nil {
		return false, err
	}
	return res.Allowed > 0, nil
}

// ulule is github.com/ulule/limiter with its Redis store: a fixed window kept
// as INCRBY and, on a new counter, PEXPIRE in one Lua script. Its window starts
// at a key's first request, not at an instant of the clock.
type ulule struct {
	lim *limiter.Limiter
}

func newUlule(rdb redis.UniversalClient, prefix string, l Limit) (Limiter, error) {
	if l.N < 1 || l.Window <= 0 {
		return nil, fmt.Errorf("lab: bad limit %s", l)
	}
	// The store writes Prefix + ":" + key.
	store, err := ulredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: prefix + "ulule"})
	if err != nil {
		return nil, fmt.Errorf("lab: ulule/limiter's Redis store: %w", err)
	}
	return &ulule{lim: limiter.New(store, limiter.Rate{Period: l.Window, Limit: int64(l.N)})}, nil
}

func (u *ulule) Allow(ctx context.Context, key string) (bool, error) {
	return u.AllowN(ctx, key, 1)
}

func (u *ulule) AllowN(ctx context.Context, key string, n int) (bool, error) {
	c, err := u.lim.Increment(ctx, key, int64(n))
	if err != nil {
		return false, err
	}
	return !c.Reached, nil
}
