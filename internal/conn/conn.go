// Package conn opens Stagedoor's connections to PostgreSQL and Redis.
package conn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// Postgres opens a pool of at most size connections to databaseURL. It does not
// wait for the server: readiness reports whether PostgreSQL answers.
func Postgres(ctx context.Context, databaseURL string, size int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	cfg.MaxConns = int32(size)
	cfg.MinConns = 0
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	return pool, nil
}

// Redis makes a client from redisURL: one redis:// URL for a single server, or
// comma-separated host:port addresses for a Redis Cluster. Deadlines are short,
// because every caller has a policy for when Redis does not answer.
func Redis(redisURL string) (redis.UniversalClient, error) {
	opts := &redis.UniversalOptions{
		DialTimeout:           250 * time.Millisecond,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		ContextTimeoutEnabled: true,
		MaxRetries:            1,
		PoolSize:              64,
	}
	if strings.Contains(redisURL, ",") {
		for _, addr := range strings.Split(redisURL, ",") {
			addr = strings.TrimPrefix(strings.TrimSpace(addr), "redis://")
			if addr == "" {
				continue
			}
			opts.Addrs = append(opts.Addrs, addr)
		}
		opts.IsClusterMode = true
		return redis.NewUniversalClient(opts), nil
	}
	parsed, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opts.Addrs = []string{parsed.Addr}
	opts.DB = parsed.DB
	opts.Username = parsed.Username
	opts.Password = parsed.Password
	opts.TLSConfig = parsed.TLSConfig
	return redis.NewUniversalClient(opts), nil
}
