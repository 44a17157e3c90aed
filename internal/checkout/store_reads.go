package checkout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/paging"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// orderColumns are the columns of an Order a read selects, as scanOrder
// reads them.
const orderColumns = `id::text, buyer_id::text, hold_id::text, event_id::text, status, total_cents, currency, created_at, refunded_at`

// scanOrder reads a row of orderColumns.
func scanOrder(row pgx.CollectableRow) (Order, error) {
	var o Order
	err := row.Scan(&o.ID, &o.BuyerID, &o.HoldID, &o.EventID, &o.Status, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.RefundedAt)
	return o, err
}

// orders returns the buyer's orders, newest first, with their tickets; only the
// one with orderID when it is not empty.
func (s store) orders(ctx context.Context, buyerID, orderID string) ([]Order, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+orderColumns+`
		FROM orders WHERE buyer_id = $1 AND ($2 = '' OR id::text = $2)
		ORDER BY created_at DESC, id LIMIT 500`, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, scanOrder)
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	tickets, err := s.tickets(ctx, buyerID, orderID, func(id string) bool {
		i := slices.IndexFunc(orders, func(o Order) bool { return o.ID == id })
		return i >= 0 && orders[i].Status == Refunded
	})
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

// eventOrders reads at most n of the event's orders that sold something (or
// may yet: pending), newest first, older than from when it is not nil. The
// row comparison walks the index on (event_id, created_at, id) backwards.
func (s store) eventOrders(ctx context.Context, eventID string, n int, from *paging.Cursor) ([]Order, error) {
	var at time.Time
	var id string
	if from != nil {
		at, id = from.At, from.ID
	}
	rows, err := s.db.Query(ctx, `
		SELECT `+orderColumns+`
		FROM orders
		WHERE event_id = $1 AND status NOT IN ('declined', 'failed', 'released')
		  AND ($2::text = '' OR (created_at, id) < ($3, NULLIF($2::text, '')::uuid))
		ORDER BY created_at DESC, id DESC LIMIT $4`, eventID, id, at, n)
	if err != nil {
		return nil, fmt.Errorf("checkout: list the event's orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, scanOrder)
	if err != nil {
		return nil, fmt.Errorf("checkout: list the event's orders: %w", err)
	}
	return orders, nil
}

// tickets returns the buyer's tickets, oldest first; only those of orderID when
// it is not empty. refunded says whether an order was refunded; nil reads the
// tickets' refunded orders, only when one of the tickets is revoked: a refund
// revokes its order's tickets in its own transaction, so a ticket not revoked
// is of no refunded order.
func (s store) tickets(ctx context.Context, buyerID, orderID string, refunded func(orderID string) bool) ([]Ticket, error) {
	issued, err := scan.TicketsOf(ctx, s.db, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("checkout: list tickets: %w", err)
	}
	if refunded == nil && slices.ContainsFunc(issued, func(t scan.Ticket) bool { return t.Revoked }) {
		orderIDs := make([]string, len(issued))
		for i, t := range issued {
			orderIDs[i] = t.OrderID
		}
		ids, err := s.refundedOrders(ctx, orderIDs)
		if err != nil {
			return nil, err
		}
		refunded = func(id string) bool { return slices.Contains(ids, id) }
	}
	tickets := make([]Ticket, len(issued))
	for i, t := range issued {
		tickets[i] = Ticket{Ticket: t, Refunded: refunded != nil && refunded(t.OrderID)}
	}
	return tickets, nil
}

// refundedOrders lists those of orderIDs that were refunded: a ticket
// transferred to a buyer is of another buyer's order.
func (s store) refundedOrders(ctx context.Context, orderIDs []string) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT id::text FROM orders WHERE id = ANY($1::uuid[]) AND status = 'refunded'`, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("checkout: list refunded orders: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("checkout: list refunded orders: %w", err)
	}
	return ids, nil
}

// revenue sums the confirmed orders of each of eventIDs that sold anything.
func (s store) revenue(ctx context.Context, eventIDs []string) (map[string]int64, error) {
	rows, err := s.db.Query(ctx, `
		SELECT event_id::text, sum(total_cents)::bigint FROM orders
		WHERE status = 'confirmed' AND event_id = ANY($1::uuid[])
		GROUP BY event_id`, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("checkout: revenue: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64, len(eventIDs))
	for rows.Next() {
		var id string
		var cents int64
		if err := rows.Scan(&id, &cents); err != nil {
			return nil, fmt.Errorf("checkout: revenue: %w", err)
		}
		out[id] = cents
	}
	return out, rows.Err()
}
