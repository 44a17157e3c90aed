package waitroom

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// privateClient returns a client on a redis-server of the test's own (so
// that its command counts are the room's alone), speaking RESP protocol
// (0: go-redis's default), closed when the test ends.
func privateClient(t testing.TB, protocol int) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.StartPrivateRedis(t).Addr, Protocol: protocol})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
