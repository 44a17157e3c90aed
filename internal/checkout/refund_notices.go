package checkout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// The buyer's e-mails of refunds and cancellations are written to the outbox
// (mail.Enqueue) in the transaction that makes what they announce, so that
// one exists exactly when its cause committed and never when it rolled back;
// sending them is internal/mail's, later, and never holds a refund up. The
// buyer is read through internal/auth and the tickets' event and seats
// through internal/scan, in the same transaction.
//
//   - Refunded: when a refund of tickets succeeds (the buyer's, the
//     organizer's, a cancellation's, or a whole refund made at Payrail by
//     someone else). A refund of money alone (part of a charge refunded at
//     Payrail) names no ticket and writes none: the provider tells the buyer.
//   - EventCancelled: when an event's cancellation begins the refund of an
//     order (its tickets stop admitting then), with what will come back; the
//     Refunded notice follows once Payrail has refunded it.

// buyerOf reads the order's buyer and currency in tx.
func buyerOf(ctx context.Context, tx pgx.Tx, orderID string) (mail.Recipient, string, error) {
	var buyerID, currency string
	if err := tx.QueryRow(ctx, `SELECT buyer_id::text, currency FROM orders WHERE id = $1`, orderID).Scan(&buyerID, &currency); err != nil {
		return mail.Recipient{}, "", fmt.Errorf("checkout: the buyer of order %s: %w", orderID, err)
	}
	a, err := auth.AccountByID(ctx, tx, buyerID)
	if err != nil {
		return mail.Recipient{}, "", err
	}
	return mail.Recipient{Name: a.Name, Email: a.Email}, currency, nil
}

// notifyRefunded writes the buyer's Refunded notice of a refund of the
// order's tickets, of amount, in tx; none for a refund of no ticket.
func notifyRefunded(ctx context.Context, tx pgx.Tx, orderID string, ticketIDs []string, amount int64) error {
	if len(ticketIDs) == 0 {
		return nil
	}
	to, currency, err := buyerOf(ctx, tx, orderID)
	if err != nil {
		return err
	}
	d, err := scan.Describe(ctx, tx, ticketIDs)
	if err != nil {
		return err
	}
	return mail.Enqueue(ctx, tx, mail.Refunded{To: to, OrderID: orderID, Event: d.Event, Tickets: d.Tickets,
		AmountCents: amount, Currency: currency})
}

// notifyCancelled writes the buyer's EventCancelled notice of an order whose
// tickets a cancellation's refund holds, which will give refund back, in tx;
// none when it holds no ticket.
func notifyCancelled(ctx context.Context, tx pgx.Tx, orderID string, ticketIDs []string, refund int64) error {
	if len(ticketIDs) == 0 {
		return nil
	}
	to, currency, err := buyerOf(ctx, tx, orderID)
	if err != nil {
		return err
	}
	d, err := scan.Describe(ctx, tx, ticketIDs[:1])
	if err != nil {
		return err
	}
	return mail.Enqueue(ctx, tx, mail.EventCancelled{To: to, OrderID: orderID, Event: d.Event, RefundCents: refund, Currency: currency})
}
