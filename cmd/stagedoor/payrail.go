package main

import (
	"context"
	"log/slog"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/payrail"
)

// payrailPool is the stub's PostgreSQL connections: enough for its charges,
// lookups and refunds at once on a laptop or in a test.
const payrailPool = 16

// servePayrail serves the Payrail payment stub on PAYRAIL_ADDR until ctx ends,
// its ledger in PAYRAIL_DATABASE_URL (through the transaction pooler when that
// is DATABASE_URL and DATABASE_URL is one), to clients with PAYRAIL_API_KEY.
func servePayrail(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	if cfg.PayrailAPIKey == "" {
		return &config.Error{Variable: "PAYRAIL_API_KEY", Problem: "must be set: Payrail serves no one without an API key (Stagedoor sends the same value)"}
	}
	open := conn.Postgres
	if cfg.Pooled() && cfg.PayrailDatabase == cfg.DatabaseURL {
		open = conn.PostgresPooler // the default ledger, behind the same transaction pooler
	}
	db, err := open(ctx, cfg.PayrailDatabase, payrailPool)
	if err != nil {
		return err
	}
	defer db.Close()
	stub, err := payrail.Open(ctx, db, payrail.Config{
		Latency:       cfg.PayrailLatency,
		LatencyJitter: cfg.PayrailJitter,
		FailureRate:   cfg.PayrailFailures,
		RecordDelay:   cfg.PayrailRecord,
		APIKey:        cfg.PayrailAPIKey,
	}, logger)
	if err != nil {
		return err
	}
	return serveHTTP(ctx, cfg.ShutdownTimeout, logger, []listening{{msg: "listening", addr: cfg.PayrailAddr, handler: stub}})
}
