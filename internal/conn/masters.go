package conn

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ForEachMaster calls fn with every master of rdb, at once (go-redis's
// ClusterClient.ForEachMaster, which ClusterClient inherits), or with rdb
// itself when it is one server's client; it returns the first error.
func ForEachMaster(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, c *redis.Client) error) error {
	type masters interface {
		ForEachMaster(ctx context.Context, fn func(ctx context.Context, c *redis.Client) error) error
	}
	if m, ok := rdb.(masters); ok {
		return m.ForEachMaster(ctx, fn)
	}
	if c, ok := rdb.(*redis.Client); ok {
		return fn(ctx, c)
	}
	return fmt.Errorf("conn: cannot reach the masters of a %T", rdb)
}
