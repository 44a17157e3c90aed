// Package migrations holds Stagedoor's numbered SQL migrations, embedded in the
// binary, and applies them with goose under a PostgreSQL advisory lock, so that
// several instances starting at once apply each migration exactly once.
//
// It owns the schema's history (every table's DDL); each table's rows belong to
// the one package its migration names.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// Up applies every pending migration to the database at databaseURL and returns
// the versions it applied. It waits for any other instance migrating the same
// database to finish first.
func Up(ctx context.Context, databaseURL string, logger *slog.Logger) ([]int64, error) {
	return UpTo(ctx, databaseURL, goose.MaxVersion, logger)
}

// UpTo is Up, applying the pending migrations up to version only (a test of a
// migration's repair of older data starts from the version before it).
func UpTo(ctx context.Context, databaseURL string, version int64, logger *slog.Logger) ([]int64, error) {
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return nil, fmt.Errorf("migrations: open database: %w", err)
	}
	defer db.Close()

	// Poll for the lock once a second, for up to five minutes.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	results, err := provider.UpTo(ctx, version)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
		logger.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	return applied, nil
}

// Fingerprint is a short hash of every migration's name and text. Test helpers
// name their migrated template database after it, so a changed migration gets a
// new template.
func Fingerprint() string {
	names, _ := fs.Glob(files, "*.sql")
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		body, _ := files.ReadFile(name)
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(body))
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// The pgx driver registers itself as "pgx" with database/sql.
var _ = stdlib.GetDefaultDriver
