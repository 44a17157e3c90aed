// Package conn opens Stagedoor's connections to PostgreSQL and Redis, and says
// when a failure is theirs (Unavailable) rather than the statement's. It owns
// no data: it only makes the clients the other packages use.
package conn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/outage"
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

// RedisLogger is go-redis's logger (give it to redis.SetLogger, once a
// process): its own lines, such as "connection pool: failed to dial", become
// one outage of Redis in logger's JSON log, a WARN line when they start and
// at most one every 10 s with a count, instead of a plain-text line each.
func RedisLogger(logger *slog.Logger) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return redisLog{outage.New(logger, "redis", 0)}
}

type redisLog struct{ outage *outage.Reporter }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.outage.Failed(errors.New(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")))
}
