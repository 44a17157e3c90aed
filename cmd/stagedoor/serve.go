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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
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
	return serveHTTP(ctx, cfg.ShutdownTimeout, logger, []listening{
		{msg: "listening", addr: cfg.Addr, handler: wrapHandler(a.Handler), bound: a.Handler.Listener},
		{msg: "serving metrics", addr: cfg.MetricsAddr, handler: a.Handler.Metrics(), bound: a.Handler.MetricsListener},
	}, a.Seats.Close)
}

// migrate applies every pending migration, under a lock shared by all
// instances: a session's, on PostgreSQL itself (STAGEDOOR_DIRECT_DATABASE_URL
// when DATABASE_URL is a transaction pooler).
func migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	applied, err := migrations.Up(ctx, cfg.SessionDatabaseURL(), logger)
	if err != nil {
		return err
	}
	logger.Info("migrations up to date", "applied_now", len(applied))
	return nil
}

// openDatabase opens a pool of at most size connections to DATABASE_URL, for
// a transaction pooler when STAGEDOOR_DIRECT_DATABASE_URL says it is one.
func openDatabase(ctx context.Context, cfg config.Config, size int) (*pgxpool.Pool, error) {
	if cfg.Pooled() {
		return conn.PostgresPooler(ctx, cfg.DatabaseURL, size)
	}
	return conn.Postgres(ctx, cfg.DatabaseURL, size)
}

// listening is one address served: the log line that says where (msg, with
// addr), what answers there, and the bounds of its connections (bound wraps
// the listener; with one, each write has a deadline of its own instead of
// the server's WriteTimeout).
type listening struct {
	msg     string
	addr    string
	handler http.Handler
	bound   func(net.Listener) net.Listener
}

// serveHTTP serves each of servers until ctx ends, then stops taking new
// requests, runs onShutdown, and lets those in flight on the first finish, for
// up to shutdownTimeout; the others (the metrics) are closed after it, so that
// a scrape during the drain still sees it.
func serveHTTP(ctx context.Context, shutdownTimeout time.Duration, logger *slog.Logger, servers []listening, onShutdown ...func()) error {
	listeners := make([]net.Listener, 0, len(servers))
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, sv := range servers {
		l, err := net.Listen("tcp", sv.addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", sv.addr, err)
		}
		listeners = append(listeners, l)
	}
	served := make(chan error, len(servers))
	srvs := make([]*http.Server, len(servers))
	for i, sv := range servers {
		srv := &http.Server{
			Handler:           sv.handler,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       90 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		l := listeners[i]
		if sv.bound != nil {
			srv.WriteTimeout = 0 // each write has STAGEDOOR_WRITE_TIMEOUT (httpapi.Listener)
			l = sv.bound(l)
		}
		if i == 0 {
			for _, f := range onShutdown {
				srv.RegisterOnShutdown(f)
			}
		}
		srvs[i] = srv
		go func() { served <- srv.Serve(l) }()
		logger.Info(sv.msg, "addr", listeners[i].Addr().String())
	}

	select {
	case err := <-served:
		for _, srv := range srvs {
			_ = srv.Close()
		}
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight", "timeout", shutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var first error
	for _, srv := range srvs {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			logger.Warn("shutdown timed out; cutting the remaining requests", "error", err)
			_ = srv.Close()
		}
	}
	for range srvs {
		if err := <-served; !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
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
