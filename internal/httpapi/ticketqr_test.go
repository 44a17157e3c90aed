package httpapi_test

import (
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestTicketQRCodeReadsAsItsCode: each ticket's QR image decodes to the
// ticket's code; another buyer gets 404; the organizer's revenue counts the
// order.
func TestTicketQRCodeReadsAsItsCode(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	buyer, other := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	order := s.buy(t, buyer, s.seats[0], s.seats[1])
	for _, tk := range order.Tickets {
		a := s.request(t, "GET", "/v1/tickets/"+tk.Id.String()+"/qr", "", buyer.bearer()...)
		if a.StatusCode != 200 || a.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("QR = %d %s", a.StatusCode, a.Header.Get("Content-Type"))
		}
		if got := testenv.DecodeQR(t, a.raw); got != *tk.Code {
			t.Errorf("ticket %s's QR reads %q, want its code %q", tk.Id.String(), got, *tk.Code)
		}
		if a := s.request(t, "GET", "/v1/tickets/"+tk.Id.String()+"/qr", "", other.bearer()...); a.StatusCode != 404 {
			t.Errorf("another buyer's QR of it = %d, want 404", a.StatusCode)
		}
	}
	events := as[struct {
		Events []struct {
			ID           string `json:"id"`
			RevenueCents int64  `json:"revenue_cents"`
		} `json:"events"`
	}](t, s.request(t, "GET", "/v1/organizer/events", "", s.org.bearer()...)).Events
	if len(events) != 1 || events[0].RevenueCents != int64(order.TotalCents) {
		t.Errorf("organizer events %+v, want revenue %d", events, order.TotalCents)
	}
}
