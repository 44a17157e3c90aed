package scan

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// holdForRefund runs HoldForRefund in a transaction of its own.
func (d *door) holdForRefund(orderID string, ticketIDs []string, rule RefundRule) ([]Held, error) {
	var held []Held
	err := pgx.BeginFunc(context.Background(), d.db, func(tx pgx.Tx) (err error) {
		held, err = HoldForRefund(context.Background(), tx, orderID, ticketIDs, rule)
		return err
	})
	return held, err
}

// TestARefundAndAScanRaceForATicket: 50 times, a ticket is held for a refund
// and scanned at the same moment. Exactly one wins each time: the scan
// admits and the hold is refused (scanned), or the hold takes the ticket and
// the scan is refused (revoked). The ticket is then made as it was for the
// next round.
func TestARefundAndAScanRaceForATicket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDoor(t)
	sc := d.scanner(t, d.events[0])
	ticket, code := d.tickets[0][0], d.codes[0][0]
	wins := map[string]int{}
	for round := range 50 {
		var holdErr, scanErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; _, holdErr = d.holdForRefund(d.orders[0], []string{ticket}, RefundRule{}) })
		wg.Go(func() { <-start; _, scanErr = d.scans.Scan(ctx, sc, code) })
		close(start)
		wg.Wait()
		switch {
		case holdErr == nil && errors.Is(scanErr, ErrRevoked):
			wins["refund"]++
			if _, err := d.db.Exec(ctx, `UPDATE tickets SET refund_status = NULL WHERE id = $1`, ticket); err != nil {
				t.Fatal(err)
			}
		case scanErr == nil && errors.Is(holdErr, ErrNotRefundable):
			wins["scan"]++
			if n := d.admittedRows(t, ticket); n != 1 {
				t.Fatalf("round %d: %d admitted rows", round, n)
			}
			if _, err := d.db.Exec(ctx, `UPDATE tickets SET scanned_at = NULL WHERE id = $1;`, ticket); err != nil {
				t.Fatal(err)
			}
			if _, err := d.db.Exec(ctx, `DELETE FROM scans WHERE ticket_id = $1`, ticket); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("round %d: hold %v, scan %v; want exactly one to win", round, holdErr, scanErr)
		}
	}
	t.Logf("wins: %v", wins)
}

// TestWhichTicketsARefundMayTake: a ticket of another order is invalid; a
// scanned one is refused (but taken by a cancellation's rule); one given to
// another holder is refused for the buyer's rule; held tickets are
// refund_pending, admit no one and cannot be held again; EndRefund refunds
// them (revoked, listed for the doors) or makes them valid again; and with
// no ticket asked for, a refund takes every one it may.
func TestWhichTicketsARefundMayTake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDoor(t)
	sc := d.scanner(t, d.events[0])
	order, tk := d.orders[0], d.tickets[0]
	if _, err := d.holdForRefund(order, []string{d.tickets[1][0]}, RefundRule{}); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a ticket of another order = %v, want invalid", err)
	}
	if _, err := d.scans.Scan(ctx, sc, d.codes[0][0]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.holdForRefund(order, tk[:1], RefundRule{}); !errors.Is(err, ErrNotRefundable) {
		t.Errorf("a scanned ticket = %v, want ErrNotRefundable", err)
	}
	if _, err := d.holdForRefund(order, tk[1:2], RefundRule{Holder: "00000000-0000-4000-8000-000000000000"}); !errors.Is(err, ErrNotRefundable) {
		t.Errorf("another holder's ticket = %v, want ErrNotRefundable", err)
	}
	held, err := d.holdForRefund(order, tk[1:3], RefundRule{Holder: d.buyer})
	if err != nil || len(held) != 2 {
		t.Fatalf("two valid tickets = %v, %v", held, err)
	}
	if _, err := d.scans.Scan(ctx, sc, d.codes[0][1]); !errors.Is(err, ErrRevoked) {
		t.Errorf("a scan of a ticket pending its refund = %v, want ErrRevoked", err)
	}
	if _, err := d.holdForRefund(order, tk[1:2], RefundRule{}); !errors.Is(err, ErrNotRefundable) {
		t.Errorf("a ticket pending its refund = %v, want ErrNotRefundable", err)
	}
	err = pgx.BeginFunc(ctx, d.db, func(tx pgx.Tx) error {
		if _, err := EndRefund(ctx, tx, tk[1:2], true); err != nil {
			return err
		}
		_, err := EndRefund(ctx, tx, tk[2:3], false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tickets, err := TicketsOf(ctx, d.db, d.buyer, order)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, x := range tickets {
		states[x.ID] = x.RefundStatus
	}
	if states[tk[1]] != Refunded || states[tk[2]] != "" {
		t.Errorf("refund states %v; want the second refunded, the third valid again", states)
	}
	if list, _ := d.scans.Revocations(ctx, sc, 0, 10); len(list) != 1 || list[0].TicketID != tk[1] {
		t.Errorf("revocations %+v, want the refunded ticket", list)
	}
	rest, err := d.holdForRefund(order, nil, RefundRule{})
	if err != nil || len(rest) != 2 {
		t.Errorf("every ticket it may = %+v, %v; want the two left unscanned", rest, err)
	}
	all, err := d.holdForRefund(d.orders[1], nil, RefundRule{Scanned: true})
	if err != nil || len(all) != 4 {
		t.Errorf("a cancellation's rule = %d, %v; want the 4 tickets", len(all), err)
	}
}
