package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestARefundAtPayrailStopsTheTickets: a buyer's order is confirmed, and its
// charge is then refunded at Payrail, as an operator or a dispute would,
// without Stagedoor's knowing. Once reconciliation has passed: the order reads
// refunded with refunded_at, its tickets read refunded, a scan of one is 409
// revoked, the door's revocations list names both, the key answers 409
// order-refunded, and the money invariant holds.
func TestARefundAtPayrailStopsTheTickets(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada := newAccount(t, s.testServer, auth.Buyer)
	body := orderBody(s.hold(t, ada, s.seats[0], s.seats[1]), "tok_visa")
	a := s.checkout(t, ada, body, "paid")
	order := as[apiclient.Order](t, a)
	if a.StatusCode != 201 || len(order.Tickets) != 2 {
		t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
	}
	_, door := newScannerKey(t, s.testServer, s.org, s.event)

	req, _ := http.NewRequest(http.MethodPost, s.payrail.url+"/charges/"+s.payrail.charges(t)[0].ID+"/refunds", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("refund at Payrail: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, err := s.Checkout.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}

	got := as[apiclient.Order](t, s.request(t, "GET", "/v1/orders/"+order.Id.String(), "", ada.bearer()...))
	if got.Status != "refunded" || got.RefundedAt == nil || len(got.Tickets) != 2 {
		t.Fatalf("the order after reconciliation = %+v, want refunded with refunded_at and its tickets", got)
	}
	for _, tk := range got.Tickets {
		if tk.Status != "refunded" {
			t.Errorf("ticket %s reads %s, want refunded", tk.Id.String(), tk.Status)
		}
	}
	wantRejected(t, "a scan of a refunded ticket", s.scanTB(t, door, *order.Tickets[0].Code), 409, "revoked")
	list := as[struct {
		Revocations []struct {
			TicketID string `json:"ticket_id"`
		} `json:"revocations"`
	}](t, s.request(t, "GET", "/v1/scanner/revocations", "", "X-Api-Key", door))
	listed := map[string]bool{}
	for _, r := range list.Revocations {
		listed[r.TicketID] = true
	}
	if len(listed) != 2 || !listed[order.Tickets[0].Id.String()] || !listed[order.Tickets[1].Id.String()] {
		t.Errorf("the door's revocations = %+v, want both tickets", list)
	}
	a = s.checkout(t, ada, body, "paid")
	if p := a.problem(t); a.StatusCode != 409 || !p.is("order-refunded") || p.OrderID != order.Id.String() || a.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the key after the refund = %d %s, want 409 order-refunded naming the order", a.StatusCode, a.raw)
	}
	s.noViolations(t)
}

// TestStagedoorSendsThePayrailAPIKey: a Payrail that asks for an API key
// charges an instance configured with PAYRAIL_API_KEY; an instance with
// another key is refused (401), which is certainly no charge: 503
// payment-unavailable, the hold active again, nothing at Payrail.
func TestStagedoorSendsThePayrailAPIKey(t *testing.T) {
	t.Parallel()
	const key = "prk_test_the-right-key-0123"
	db := testenv.Postgres(t)
	p := startPayrailOn(t, db, payrail.Config{APIKey: key})
	env := []string{"PAYRAIL_URL", p.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s"}
	right := startInstance(t, instance{db: db, env: limitEnv(append(env, "PAYRAIL_API_KEY", key)...)})
	wrong := startInstance(t, instance{db: db, env: limitEnv(append(env, "PAYRAIL_API_KEY", "prk_test_another-key-4567")...)})
	s := &shop{testServer: wrong, payrail: p}
	org := newAccount(t, wrong, auth.Organizer)
	s.event, s.seats = newEvent(t, wrong, org, eventBody(1, 2))
	ada := newAccount(t, wrong, auth.Buyer)
	holdID := s.hold(t, ada, s.seats[0])
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), ""); a.StatusCode != 503 || !a.problem(t).is("payment-unavailable") {
		t.Errorf("checkout with the wrong key = %d %s, want 503 payment-unavailable", a.StatusCode, a.raw)
	}
	if n := len(p.charges(t)); n != 0 {
		t.Fatalf("%d charges made with the wrong key", n)
	}
	s.testServer = right
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), ""); a.StatusCode != 201 {
		t.Errorf("checkout with the right key = %d %s, want 201", a.StatusCode, a.raw)
	}
}
