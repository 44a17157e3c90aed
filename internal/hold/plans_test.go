package hold

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAPlacementRunsGenericPlans: the statements after the buyer's lock in a
// placement's batch run under force_generic_plan (so that placeSQL is not
// planned anew each time) and commit without waiting for the WAL's flush
// (asyncCommit), and the connection goes back to the pool with the settings it
// had.
func TestAPlacementRunsGenericPlans(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	ctx := context.Background()
	batch := &pgx.Batch{}
	batch.Queue(lockBuyerSQL, ids.New(), ids.New())
	var inBatch, after, syncIn, syncAfter string
	batch.Queue(`SELECT current_setting('plan_cache_mode'), current_setting('synchronous_commit')`).
		QueryRow(func(row pgx.Row) error { return row.Scan(&inBatch, &syncIn) })
	if err := db.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_setting('synchronous_commit')`).
		Scan(&after, &syncAfter); err != nil {
		t.Fatal(err)
	}
	if inBatch != "force_generic_plan" || after != "auto" {
		t.Fatalf("plan_cache_mode in the batch %q, after it %q; want force_generic_plan, then auto", inBatch, after)
	}
	if syncIn != "off" || syncAfter != "on" {
		t.Fatalf("synchronous_commit in the batch %q, after it %q; want off, then on", syncIn, syncAfter)
	}
}
