package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisNow is Redis's clock, the one its scripts read, failing t when Redis
// does not answer.
func RedisNow(t testing.TB, rdb redis.UniversalClient) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// SleepUntilRedis sleeps until Redis's clock reads at least at.
func SleepUntilRedis(t testing.TB, rdb redis.UniversalClient, at time.Time) {
	t.Helper()
	for now := RedisNow(t, rdb); now.Before(at); now = RedisNow(t, rdb) {
		time.Sleep(at.Sub(now) + time.Millisecond)
	}
}
