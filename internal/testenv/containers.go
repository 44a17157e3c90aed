//go:build testcontainers

package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
)

type services struct {
	postgresURL string
	redisURL    string
	err         error
}

var (
	containersOnce sync.Once
	started        services
)

// containers starts PostgreSQL and Redis in Docker once per test binary, when a
// Docker engine answers. testcontainers' reaper removes them when the binary exits.
func containers(t testing.TB) services {
	t.Helper()
	containersOnce.Do(func() { started = startContainers() })
	if started.err != nil {
		t.Fatalf("%s\n(%v)", help, started.err)
	}
	return started
}

func startContainers() services {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return services{err: fmt.Errorf("no Docker engine: %w", err)}
	}
	defer provider.Close()
	if err := provider.Health(ctx); err != nil {
		return services{err: fmt.Errorf("no Docker engine answers: %w", err)}
	}

	pg, err := tcpostgres.Run(ctx, "postgres:15-alpine",
		tcpostgres.WithDatabase("postgres"),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
	)
	if err != nil {
		return services{err: fmt.Errorf("start PostgreSQL container: %w", err)}
	}
	pgURL, err := pg.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return services{err: err}
	}
	rd, err := tcredis.Run(ctx, "redis:7-alpine")
	if err != nil {
		return services{err: fmt.Errorf("start Redis container: %w", err)}
	}
	redisURL, err := rd.ConnectionString(ctx)
	if err != nil {
		return services{err: err}
	}
	return services{postgresURL: pgURL, redisURL: redisURL}
}
