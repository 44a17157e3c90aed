package testenv

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// RedisClient returns a client on url as the server builds its own (context
// deadlines honoured, RESP2: no push notifications to look for) with a pool
// of poolSize, changed by tune when it is not nil (a test that must see a
// failure sets MaxRetries -1). It is closed when the test ends.
func RedisClient(t testing.TB, url string, poolSize int, tune func(*redis.Options)) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("testenv: Redis URL: %v", err)
	}
	opts.ContextTimeoutEnabled = true
	opts.PoolSize = poolSize
	opts.Protocol = 2
	if tune != nil {
		tune(opts)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}
