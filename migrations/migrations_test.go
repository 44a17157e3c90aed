package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/migrations"
)

// TestThreeInstancesMigrateAtOnce: three instances starting together on an
// empty database apply each migration exactly once between them.
func TestThreeInstancesMigrateAtOnce(t *testing.T) {
	t.Parallel()
	url := testenv.EmptyDatabaseURL(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	var wg sync.WaitGroup
	applied := make([][]int64, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i], errs[i] = migrations.Up(context.Background(), url, logger)
		}()
	}
	wg.Wait()

	seen := map[int64]int{}
	for i := range 3 {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		for _, v := range applied[i] {
			seen[v]++
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(),
		`SELECT version_id, count(*) FROM goose_db_version WHERE version_id > 0 GROUP BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Version, Count int64 }])
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) == 0 || len(recorded) != len(seen) {
		t.Fatalf("recorded versions %v, applied %v", recorded, seen)
	}
	for _, r := range recorded {
		if r.Count != 1 || seen[r.Version] != 1 {
			t.Errorf("version %d recorded %d times, applied %d times; want once", r.Version, r.Count, seen[r.Version])
		}
	}

	again, err := migrations.Up(context.Background(), url, logger)
	if err != nil || len(again) != 0 {
		t.Errorf("a fourth start applied %v (%v), want nothing", again, err)
	}
}
