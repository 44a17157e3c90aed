package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/paging"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// orderColumns are the columns of an Order a read selects, as scanOrder
// reads them.
const orderColumns = `id::text, buyer_id::text, hold_id::text, event_id::text, status, total_cents, currency, created_at,
	refunded_at, refunded_cents`

// scanOrder reads a row of orderColumns.
func scanOrder(row pgx.CollectableRow) (Order, error) {
	var o Order
	err := row.Scan(&o.ID, &o.BuyerID, &o.HoldID, &o.EventID, &o.Status, &o.TotalCents, &o.Currency, &o.CreatedAt,
		&o.RefundedAt, &o.RefundedCents)
	return o, err
}

// orders returns the buyer's orders, newest first, with their refunds and
// tickets; only the one with orderID when it is not empty.
func (s store) orders(ctx context.Context, buyerID, orderID string) ([]Order, error) {
	return s.readOrders(ctx, `buyer_id = $1 AND ($2 = '' OR id::text = $2)`, buyerID, orderID)
}

// orderByID returns an order, whoever bought it, with its refunds and its
// buyer's tickets of it; errNotFound when there is none.
func (s store) orderByID(ctx context.Context, orderID string) (Order, error) {
	orders, err := s.readOrders(ctx, `id = $1::uuid AND $2 = ''`, orderID, "")
	if err != nil {
		return Order{}, err
	}
	if len(orders) == 0 {
		return Order{}, errNotFound
	}
	return orders[0], nil
}

// readOrders reads the orders where says ($1 and $2 its arguments), newest
// first, at most 500, each with its refunds and its buyer's tickets of it.
func (s store) readOrders(ctx context.Context, where string, arg1, arg2 string) ([]Order, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+orderColumns+`
		FROM orders WHERE `+where+`
		ORDER BY created_at DESC, id LIMIT 500`, arg1, arg2)
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, scanOrder)
	if err != nil {
		return nil, fmt.Errorf("checkout: list orders: %w", err)
	}
	if len(orders) == 0 {
		return orders, nil
	}
	orderIDs := make([]string, len(orders))
	for i, o := range orders {
		orderIDs[i] = o.ID
	}
	refunds, err := s.refundsOf(ctx, orderIDs)
	if err != nil {
		return nil, err
	}
	onlyOrder := ""
	if len(orders) == 1 {
		onlyOrder = orders[0].ID
	}
	tickets, err := s.tickets(ctx, orders[0].BuyerID, onlyOrder)
	if err != nil {
		return nil, err
	}
	byOrder := make(map[string][]Ticket, len(orders))
	for _, t := range tickets {
		byOrder[t.OrderID] = append(byOrder[t.OrderID], t)
	}
	for i := range orders {
		orders[i].Tickets, orders[i].Refunds = byOrder[orders[i].ID], refunds[orders[i].ID]
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

// tickets returns the buyer's tickets, oldest first; only those of orderID
// when it is not empty.
func (s store) tickets(ctx context.Context, buyerID, orderID string) ([]Ticket, error) {
	issued, err := scan.TicketsOf(ctx, s.db, buyerID, orderID)
	if err != nil {
		return nil, fmt.Errorf("checkout: list tickets: %w", err)
	}
	tickets := make([]Ticket, len(issued))
	for i, t := range issued {
		tickets[i] = Ticket{Ticket: t}
	}
	return tickets, nil
}

// revenue sums, for each of eventIDs that sold anything, what its sold
// orders took and kept: their totals less what was refunded.
func (s store) revenue(ctx context.Context, eventIDs []string) (map[string]int64, error) {
	rows, err := s.db.Query(ctx, `
		SELECT event_id::text, sum(total_cents - refunded_cents)::bigint FROM orders
		WHERE status IN ('confirmed', 'partially_refunded') AND event_id = ANY($1::uuid[])
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
