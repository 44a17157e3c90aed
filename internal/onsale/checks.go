package onsale

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/docs"
)

// Check is one property of the sale, checked once it is over.
type Check struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Skipped bool   `json:"skipped,omitempty"` // too little to judge by; it counts as passed
	Detail  string `json:"detail"`
}

// The checks, by name. docs/onsale.md says what each means.
const (
	checkSoldOnce  = "no seat sold twice"
	checkCharged   = "every confirmed order has its charge"
	checkNo5xx     = "no 5xx but the documented 503s"
	checkLottery   = "early joiners admitted in lottery order"
	checkBots      = "bots got no more than their share"
	checkHoldLimit = "the per-buyer hold limit held across instances"
)

// checkInput is what the checks read besides the database.
type checkInput struct {
	opts   Options
	sale   Sale
	accts  accounts
	rec    *recorder
	buyers []*buyerState
	limits limitsInForce
}

// runChecks runs every check, in the order of the constants above.
func runChecks(ctx context.Context, in checkInput) []Check {
	requests, names, _ := in.rec.snapshot()
	return []Check{
		soldOnce(ctx, in),
		charged(ctx, in),
		no5xx(requests, names),
		lottery(in.buyers, in.sale),
		botsShare(ctx, in),
		holdLimitHeld(requests, names, in.limits.holdBuyer(), len(in.buyers)),
	}
}

func failed(name string, err error) Check {
	return Check{Name: name, Detail: "could not check: " + err.Error()}
}

// soldOnce: from PostgreSQL, no seat of the event has two tickets or is in
// two confirmed orders, and a seat is sold exactly when it has a ticket; and
// no two buyers were told the same seat is theirs.
func soldOnce(ctx context.Context, in checkInput) Check {
	var sold, tickets, twice, inTwoOrders, mismatched int
	err := in.opts.DB.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NOT NULL),
		  (SELECT count(*) FROM tickets WHERE event_id = $1),
		  (SELECT count(*) FROM (SELECT seat_id FROM tickets WHERE event_id = $1
		                         GROUP BY seat_id HAVING count(*) > 1) d),
		  (SELECT count(*) FROM (SELECT x FROM orders o JOIN holds h ON h.id = o.hold_id, unnest(h.seat_ids) x
		                         WHERE o.event_id = $1 AND o.status = 'confirmed'
		                         GROUP BY x HAVING count(*) > 1) d),
		  (SELECT count(*) FROM seats s WHERE s.event_id = $1
		     AND (s.sold_at IS NOT NULL) <> EXISTS (SELECT 1 FROM tickets t WHERE t.seat_id = s.id))`,
		in.sale.EventID).Scan(&sold, &tickets, &twice, &inTwoOrders, &mismatched)
	if err != nil {
		return failed(checkSoldOnce, err)
	}
	owner := map[string]int{}
	told, toldTwice := 0, 0
	for i, b := range in.buyers {
		for _, s := range b.seats {
			told++
			if _, ok := owner[s]; ok {
				toldTwice++
			}
			owner[s] = i
		}
	}
	return Check{
		Name:   checkSoldOnce,
		Passed: twice == 0 && inTwoOrders == 0 && mismatched == 0 && toldTwice == 0,
		Detail: fmt.Sprintf("%d of %d seats sold, %d tickets; seats with two tickets: %d, in two confirmed orders: %d, sold without a ticket or the reverse: %d; "+
			"buyers were told of %d seats, %d of them told to two buyers", sold, in.opts.Seats, tickets, twice, inTwoOrders, mismatched, told, toldTwice),
	}
}

// charged: every confirmed order of the event names its charge, and that
// charge is in Payrail's ledger, succeeded and not refunded; when the ledger
// is in Stagedoor's database, the money invariant (docs/invariant.sql)
// returns no row either.
func charged(ctx context.Context, in checkInput) Check {
	rows, err := in.opts.DB.Query(ctx, `
		SELECT id::text, coalesce(charge_id, '') FROM orders WHERE event_id = $1 AND status = 'confirmed'`, in.sale.EventID)
	if err != nil {
		return failed(checkCharged, err)
	}
	chargeOf := map[string]string{}
	var id, charge string
	if _, err := pgx.ForEachRow(rows, []any{&id, &charge}, func() error { chargeOf[id] = charge; return nil }); err != nil {
		return failed(checkCharged, err)
	}
	noCharge := 0
	orderIDs := make([]string, 0, len(chargeOf))
	for id, c := range chargeOf {
		if c == "" {
			noCharge++
		}
		orderIDs = append(orderIDs, id)
	}
	var pending int
	if err := in.opts.DB.QueryRow(ctx, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'pending'`,
		in.sale.EventID).Scan(&pending); err != nil {
		return failed(checkCharged, err)
	}
	detail := fmt.Sprintf("%d confirmed orders, %d without a charge id; %d orders still pending", len(chargeOf), noCharge, pending)

	ledger, sameDB, err := payrailLedger(ctx, in.opts)
	if err != nil {
		return failed(checkCharged, err)
	}
	if ledger == nil {
		return Check{Name: checkCharged, Passed: noCharge == 0,
			Detail: detail + "; Payrail's ledger not read (no schema payrail in the database; -payrail-database-url names it)"}
	}
	notInLedger, err := chargesNotInLedger(ctx, ledger, chargeOf, orderIDs)
	if err != nil {
		return failed(checkCharged, err)
	}
	detail += fmt.Sprintf("; %d without their succeeded, unrefunded charge in Payrail's ledger", notInLedger)
	violations := []string(nil)
	if sameDB {
		if violations, err = moneyViolations(ctx, in.opts.DB); err != nil {
			return failed(checkCharged, err)
		}
		detail += fmt.Sprintf("; money invariant (docs/invariant.sql): %d violations", len(violations))
		if len(violations) > 0 {
			detail += ": " + strings.Join(violations[:min(5, len(violations))], "; ")
		}
	}
	return Check{Name: checkCharged, Passed: noCharge == 0 && notInLedger == 0 && len(violations) == 0, Detail: detail}
}

// payrailLedger is the database that holds Payrail's ledger, if any is known,
// and whether it is Stagedoor's.
func payrailLedger(ctx context.Context, o Options) (*pgxpool.Pool, bool, error) {
	if o.PayrailDB != nil {
		return o.PayrailDB, false, nil
	}
	var has bool
	if err := o.DB.QueryRow(ctx, `SELECT to_regclass('payrail.charges') IS NOT NULL`).Scan(&has); err != nil {
		return nil, false, err
	}
	if !has {
		return nil, false, nil
	}
	return o.DB, true, nil
}

// chargesNotInLedger counts the orders whose charge is not in the ledger as
// a succeeded, unrefunded charge with the order's id as its key.
func chargesNotInLedger(ctx context.Context, ledger *pgxpool.Pool, chargeOf map[string]string, orderIDs []string) (int, error) {
	rows, err := ledger.Query(ctx, `
		SELECT idempotency_key FROM payrail.charges
		WHERE idempotency_key = ANY($1::text[]) AND status = 'succeeded' AND refunded_cents = 0 AND id = ($2::jsonb ->> idempotency_key)`,
		orderIDs, chargeOf)
	if err != nil {
		return 0, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	return len(orderIDs) - len(found), nil
}

// moneyViolations runs docs/invariant.sql: every row is a violation.
func moneyViolations(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	rows, err := db.Query(ctx, docs.InvariantSQL)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var what, subject string
		err := row.Scan(&what, &subject)
		return what + ": " + subject, err
	})
}

// botsShare: the seats the bots ever held (in any hold, paid or not) are no
// more than their share of the arrivals, bots/(buyers+bots) of the seats,
// rounded down; with a waiting room, none, since a hold needs an admission
// and the bots never queue.
func botsShare(ctx context.Context, in checkInput) Check {
	if len(in.accts.bots) == 0 {
		return Check{Name: checkBots, Passed: true, Skipped: true, Detail: "no bots"}
	}
	botIDs := make([]string, len(in.accts.bots))
	for i, s := range in.accts.bots {
		botIDs[i] = s.Principal.AccountID
	}
	var held, bought int
	if err := in.opts.DB.QueryRow(ctx, `
		SELECT
		  (SELECT count(DISTINCT x) FROM holds h, unnest(h.seat_ids) x WHERE h.event_id = $1 AND h.buyer_id = ANY($2::uuid[])),
		  (SELECT count(*) FROM tickets WHERE event_id = $1 AND buyer_id = ANY($2::uuid[]))`,
		in.sale.EventID, botIDs).Scan(&held, &bought); err != nil {
		return failed(checkBots, err)
	}
	share := in.opts.Seats * len(botIDs) / (len(botIDs) + len(in.buyers))
	why := fmt.Sprintf("their share of the arrivals: %d bots of %d clients × %d seats", len(botIDs), len(botIDs)+len(in.buyers), in.opts.Seats)
	if in.sale.HasRoom {
		share, why = 0, "none: the event has a waiting room and the bots never queue"
	}
	return Check{Name: checkBots, Passed: held <= share,
		Detail: fmt.Sprintf("bots held %d seats (bought %d); allowed %d, %s", held, bought, share, why)}
}
