package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestMigrateAndSeedBehindPgBouncer: with STAGEDOOR_DIRECT_DATABASE_URL set,
// "stagedoor migrate" applies the migrations (goose, under its session's
// advisory lock) on PostgreSQL itself and never connects to DATABASE_URL,
// here a port nobody answers; and "stagedoor seed", twice, makes the demo
// data through a PgBouncer in transaction mode, where statements prepared on
// one server connection would be missing, or found already made, on the next.
func TestMigrateAndSeedBehindPgBouncer(t *testing.T) {
	t.Parallel()
	direct := testenv.EmptyDatabaseURL(t)
	env := testEnv(t)
	env["STAGEDOOR_DIRECT_DATABASE_URL"] = direct
	env["DATABASE_URL"] = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/nowhere?sslmode=disable&connect_timeout=1", testenv.FreePort(t))
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, &stderr, &stderr); err != nil {
		t.Fatalf("stagedoor migrate with DATABASE_URL unreachable: %v\n%s", err, stderr.String())
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var applied int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0 AND is_applied`).Scan(&applied); err != nil || applied < 12 {
		t.Fatalf("migrations applied on the direct URL: %d (%v), want every one", applied, err)
	}

	env["DATABASE_URL"] = testenv.StartPgBouncer(t, direct).URL
	envFile := filepath.Join(t.TempDir(), ".env.demo")
	first, _ := seedOutput(t, env, envFile)
	again, _ := seedOutput(t, env, envFile)
	if first["DEMO_EVENT"] == "" || again["DEMO_EVENT"] != first["DEMO_EVENT"] || again["DEMO_SCANNER_KEY_ID"] != first["DEMO_SCANNER_KEY_ID"] {
		t.Errorf("seeding twice through PgBouncer: event %q then %q, key %q then %q", first["DEMO_EVENT"], again["DEMO_EVENT"],
			first["DEMO_SCANNER_KEY_ID"], again["DEMO_SCANNER_KEY_ID"])
	}
}
