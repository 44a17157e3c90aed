package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/limitadmin"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// startLimitSettings stores the environment's limit settings where none is
// stored yet, applies the stored ones to limiter (they win over the environment),
// and keeps limiter in step with every other instance until stop is called. An
// instance that cannot read the stored settings does not start: it would ignore
// a kill switch turned on by an operator.
func startLimitSettings(ctx context.Context, cfg config.Config, db *pgxpool.Pool, limiter *ratelimit.Limiter,
	registry prometheus.Registerer, logger *slog.Logger) (settings *limitadmin.Service, stop func(), err error) {
	settings = limitadmin.New(db, limiter, limitadmin.Options{Registerer: registry, Logger: logger})
	startCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := settings.Start(startCtx, cfg.LimitDefinitions()); err != nil {
		return nil, nil, fmt.Errorf("limit settings: %w", err)
	}
	return settings, runInBackground(ctx, settings.Run), nil
}
