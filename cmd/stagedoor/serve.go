package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/migrations"
)

// wrapHandler lets the whole-program tests add a slow route around the API.
var wrapHandler = func(h http.Handler) http.Handler { return h }

// serve applies pending migrations (unless STAGEDOOR_AUTO_MIGRATE=false),
// builds the instance (internal/app), starts its background loops, and serves
// until ctx ends (SIGTERM); the loops stop after the last request in flight.
func serve(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	if cfg.AutoMigrate {
		if err := migrate(ctx, cfg, logger); err != nil {
			return err
		}
	}
	a, err := app.New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	defer a.Start(ctx, app.All)()
	// Streams last: at shutdown they end at once (browsers reconnect elsewhere)
	// instead of holding it up.
	return serveHTTP(ctx, cfg.Addr, wrapHandler(a.Handler), cfg.ShutdownTimeout, logger, a.Seats.Close)
}

// migrate applies every pending migration, under a lock shared by all instances.
func migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	applied, err := migrations.Up(ctx, cfg.DatabaseURL, logger)
	if err != nil {
		return err
	}
	logger.Info("migrations up to date", "applied_now", len(applied))
	return nil
}

// serveHTTP serves handler on addr until ctx ends, then stops taking new
// requests, runs onShutdown, and lets those in flight finish, for up to
// shutdownTimeout.
func serveHTTP(ctx context.Context, addr string, handler http.Handler, shutdownTimeout time.Duration, logger *slog.Logger, onShutdown ...func()) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	for _, f := range onShutdown {
		srv.RegisterOnShutdown(f)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	logger.Info("listening", "addr", listener.Addr().String())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight", "timeout", shutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("shutdown timed out; cutting the remaining requests", "error", err)
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// healthcheck GETs URL (default: this instance's /healthz) and fails unless it
// answers 200. Container images without curl use it for their healthcheck.
func healthcheck(ctx context.Context, args []string, getenv func(string) string) error {
	target := ""
	if len(args) > 0 {
		target = args[0]
	} else {
		addr := getenv("STAGEDOOR_ADDR")
		if addr == "" {
			addr = ":8080"
		}
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		target = "http://" + addr + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return usageError{fmt.Sprintf("healthcheck: %v", err)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", target, resp.Status)
	}
	return nil
}

func newLogger(w interface{ Write([]byte) (int, error) }, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
