package main

import (
	"context"
	"log/slog"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/payrail"
)

// servePayrail serves the Payrail payment stub on PAYRAIL_ADDR until ctx ends.
func servePayrail(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	stub := payrail.NewServer(payrail.Config{
		Latency:     cfg.PayrailLatency,
		FailureRate: cfg.PayrailFailures,
	}, logger)
	return serveHTTP(ctx, cfg.PayrailAddr, stub, cfg.ShutdownTimeout, logger)
}
