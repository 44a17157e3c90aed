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
// planned anew each time), and the connection goes back to the pool with the
// setting it had.
func TestAPlacementRunsGenericPlans(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	ctx := context.Background()
	batch := &pgx.Batch{}
	batch.Queue(lockBuyerSQL, ids.New(), ids.New())
	var inBatch, after string
	batch.Queue(`SHOW plan_cache_mode`).QueryRow(func(row pgx.Row) error { return row.Scan(&inBatch) })
	if err := db.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if inBatch != "force_generic_plan" || after != "auto" {
		t.Fatalf("plan_cache_mode in the batch %q, after it %q; want force_generic_plan, then auto", inBatch, after)
	}
}
