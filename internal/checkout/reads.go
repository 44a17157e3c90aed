package checkout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// orders returns the buyer's orders, newest first, with their tickets; only the
// one with orderID when it is not empty.
func (s store) orders(ctx context.Context, buyerID, orderID string) ([]Order, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id::text, buyer_id::text, hold_id::text, event_id::text, status, total_cents, currency, created_at, refunded_at
		FROM orders WHERE buyer_id = $1 AND ($2 = '' OR id::text = $2)
		ORDER BY created_at DESC, id LIMIT 500`, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) {
		var o Order
		err := row.Scan(&o.ID, &o.BuyerID, &o.HoldID, &o.EventID, &o.Status, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.RefundedAt)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	tickets, err := s.tickets(ctx, buyerID, orderID)
	if err != nil {
		return nil, err
	}
	byOrder := make(map[string][]Ticket, len(orders))
	for _, t := range tickets {
		byOrder[t.OrderID] = append(byOrder[t.OrderID], t)
	}
	for i := range orders {
		orders[i].Tickets = byOrder[orders[i].ID]
	}
	return orders, nil
}

// tickets returns the buyer's tickets, oldest first; only those of orderID when
// it is not empty.
func (s store) tickets(ctx context.Context, buyerID, orderID string) ([]Ticket, error) {
	rows, err := s.db.Query(ctx, `
		SELECT t.id::text, t.order_id::text, t.event_id::text, t.seat_id::text, t.code, t.scanned_at, o.status = 'refunded'
		FROM tickets t JOIN orders o ON o.id = t.order_id
		WHERE t.buyer_id = $1 AND ($2 = '' OR t.order_id::text = $2)
		ORDER BY t.created_at, t.id`, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("checkout: list tickets: %w", err)
	}
	tickets, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Ticket, error) {
		var t Ticket
		err := row.Scan(&t.ID, &t.OrderID, &t.EventID, &t.SeatID, &t.Code, &t.ScannedAt, &t.Refunded)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("checkout: list tickets: %w", err)
	}
	return tickets, nil
}
