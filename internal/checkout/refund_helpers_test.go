package checkout

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// gate stands in front of Payrail: while refundDelay is set, the answer to
// each POST /charges/{id}/refunds is held back that long (or until the client
// goes away), after Payrail has made the refund: a slow Payrail, as the
// client sees one.
type gate struct {
	next        http.Handler
	refundDelay atomic.Int64 // nanoseconds
	refundCalls atomic.Int64 // POST .../refunds that reached Payrail
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/refunds") {
		g.next.ServeHTTP(w, r)
		return
	}
	g.refundCalls.Add(1)
	if d := time.Duration(g.refundDelay.Load()); d > 0 {
		w = &slowWriter{ResponseWriter: w, r: r, d: d}
	}
	g.next.ServeHTTP(w, r)
}

// slowWriter holds the answer back for d, or until the client goes away.
type slowWriter struct {
	http.ResponseWriter
	r    *http.Request
	d    time.Duration
	gone bool
}

func (w *slowWriter) WriteHeader(code int) {
	t := time.NewTimer(w.d)
	defer t.Stop()
	select {
	case <-t.C:
		w.ResponseWriter.WriteHeader(code)
	case <-w.r.Context().Done():
		w.gone = true
	}
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.gone {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// buy checks out seats for the buyer through the till and returns the
// confirmed order.
func (w *world) buy(t *testing.T, buyer string, seats ...int) Order {
	t.Helper()
	h := w.holdFor(t, buyer, seats...)
	res, err := w.till.Checkout(context.Background(), Request{BuyerID: buyer, HoldID: h.ID, PaymentToken: payrail.TokenVisa})
	if err != nil || res.Order.Status != Confirmed {
		t.Fatalf("checkout of seats %v = %+v, %v; want confirmed", seats, res, err)
	}
	return res.Order
}

// refund asks, as the order's buyer, for a refund of its tickets (none: all).
func (w *world) refund(buyer, orderID, key string, ticketIDs ...string) (RefundResult, error) {
	return w.checkout.Refund(context.Background(), RefundRequest{AccountID: buyer, OrderID: orderID,
		TicketIDs: ticketIDs, IdempotencyKey: key})
}

// chargeOf returns Payrail's charge of the order.
func (w *world) chargeOf(t *testing.T, orderID string) payrail.Charge {
	t.Helper()
	for _, c := range w.charges(t) {
		if c.IdempotencyKey == orderID {
			return c
		}
	}
	t.Fatalf("Payrail has no charge of order %s", orderID)
	return payrail.Charge{}
}

// door returns a scanner of the event's organizer and the scan service.
func (w *world) door(t *testing.T) (*scan.Service, scan.Scanner) {
	t.Helper()
	k, err := auth.NewService(w.db, 4).WithEvents(w.events).CreateScannerKey(context.Background(), w.event.OrganizerID, "Gate", w.event.ID)
	if err != nil {
		t.Fatal(err)
	}
	return scan.NewService(w.db, nil), scan.Scanner{KeyID: k.ID, OrganizerID: w.event.OrganizerID, EventID: w.event.ID}
}

// seatSold reads whether a seat is sold.
func (w *world) seatSold(t *testing.T, seatID string) bool {
	t.Helper()
	var sold bool
	if err := w.db.QueryRow(context.Background(), `SELECT sold_at IS NOT NULL FROM seats WHERE id = $1`, seatID).Scan(&sold); err != nil {
		t.Fatal(err)
	}
	return sold
}

// ticketStatuses maps the order's tickets, as its buyer reads them, to their
// status.
func ticketStatuses(o Order) map[string]string {
	out := map[string]string{}
	for _, tk := range o.Tickets {
		out[tk.ID] = tk.Status()
	}
	return out
}
