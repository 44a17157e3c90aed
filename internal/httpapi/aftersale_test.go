package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// refundPath is the refund route of an order: the buyer's, or the
// organizer's.
func refundPath(orderID string, organizer bool) string {
	if organizer {
		return "/v1/organizer/orders/" + orderID + "/refund"
	}
	return "/v1/orders/" + orderID + "/refund"
}

// refund posts a refund of the order as who, with key unless empty and body
// unless empty.
func (s *shop) refund(t testing.TB, who testAccount, organizer bool, orderID, key, body string) answer {
	t.Helper()
	header := who.bearer()
	if key != "" {
		header = append(header, "Idempotency-Key", key)
	}
	return s.request(t, "POST", refundPath(orderID, organizer), body, header...)
}

// openRefunds gives the shop's event a refund window of a day, through its
// organizer's PATCH.
func (s *shop) openRefunds(t testing.TB) {
	t.Helper()
	until := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	if a := s.request(t, "PATCH", "/v1/organizer/events/"+s.event, fmt.Sprintf(`{"refunds_until":%q}`, until), s.org.bearer()...); a.StatusCode != 200 {
		t.Fatalf("PATCH refunds_until = %d %s", a.StatusCode, a.raw)
	}
}

// buy checks out the seats for the buyer and returns the confirmed order,
// failing the test unless it holds a ticket for each seat.
func (s *shop) buy(t testing.TB, buyer testAccount, seats ...string) apiclient.Order {
	t.Helper()
	a := s.checkout(t, buyer, orderBody(s.hold(t, buyer, seats...), "tok_visa"), "")
	o := as[apiclient.Order](t, a)
	if a.StatusCode != 201 || len(o.Tickets) != len(seats) {
		t.Fatalf("checkout = %d %s, want %d tickets", a.StatusCode, a.raw, len(seats))
	}
	return o
}

// ticketStatus is the status of the order's ticket with this id, "" when it
// has none.
func ticketStatus(o apiclient.Order, ticketID string) string {
	for _, tk := range o.Tickets {
		if tk.Id.String() == ticketID {
			return string(tk.Status)
		}
	}
	return ""
}

// TestRefundsOverHTTP: the buyer refunds one ticket with a key (200, the
// order partially_refunded, the ticket refunded, the refund listed); the key
// again is replayed, with another body 422; the refunded ticket again is 409
// ticket-not-refundable naming it; another buyer and another organizer are
// 404; the door refuses the refunded ticket; the organizer refunds the rest
// (200, refunded); once the window has closed the buyer gets 409
// refund-window-closed. Every answer is the contract's.
func TestRefundsOverHTTP(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	s.openRefunds(t)
	ada := newAccount(t, s.testServer, auth.Buyer)
	o := s.buy(t, ada, s.seats[0], s.seats[1], s.seats[2])
	first := fmt.Sprintf(`{"ticket_ids":[%q]}`, o.Tickets[0].Id.String())
	a := s.refund(t, ada, false, o.Id.String(), "r1", first)
	got := as[apiclient.Order](t, a)
	if a.StatusCode != 200 || got.Status != "partially_refunded" || deref(got.RefundedCents) != 4500 || len(deref(got.Refunds)) != 1 ||
		(*got.Refunds)[0].Status != "succeeded" || (*got.Refunds)[0].Reason != "buyer" || ticketStatus(got, o.Tickets[0].Id.String()) != "refunded" {
		t.Fatalf("a refund of one ticket = %d %s", a.StatusCode, a.raw)
	}
	if a := s.refund(t, ada, false, o.Id.String(), "r1", first); a.StatusCode != 200 || a.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the key again = %d %s, want 200 replayed", a.StatusCode, a.raw)
	}
	if a := s.refund(t, ada, false, o.Id.String(), "r1", ""); a.StatusCode != 422 || !a.problem(t).is("idempotency-mismatch") {
		t.Errorf("the key with another body = %d %s, want 422", a.StatusCode, a.raw)
	}
	a = s.refund(t, ada, false, o.Id.String(), "r2", first)
	if p := a.problem(t); a.StatusCode != 409 || !p.is("ticket-not-refundable") || len(p.NotRefundable) != 1 || p.NotRefundable[0] != o.Tickets[0].Id.String() {
		t.Errorf("the refunded ticket again = %d %s, want 409 naming it", a.StatusCode, a.raw)
	}
	stranger, otherOrg := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Organizer)
	if a := s.refund(t, stranger, false, o.Id.String(), "", ""); a.StatusCode != 404 {
		t.Errorf("another buyer = %d %s, want 404", a.StatusCode, a.raw)
	}
	if a := s.refund(t, otherOrg, true, o.Id.String(), "", ""); a.StatusCode != 404 {
		t.Errorf("another organizer = %d %s, want 404", a.StatusCode, a.raw)
	}
	if a := s.refund(t, ada, false, o.Id.String(), "", `{"ticket_ids":["nope"]}`); a.StatusCode != 400 {
		t.Errorf("a malformed ticket id = %d %s, want 400", a.StatusCode, a.raw)
	}
	_, door := newScannerKey(t, s.testServer, s.org, s.event)
	wantRejected(t, "a scan of the refunded ticket", s.scanTB(t, door, *o.Tickets[0].Code), 409, "revoked")

	if _, err := s.DB.Exec(context.Background(), `UPDATE events SET refunds_until = now() - interval '1 second' WHERE id = $1`, s.event); err != nil {
		t.Fatal(err)
	}
	if a := s.refund(t, ada, false, o.Id.String(), "", ""); a.StatusCode != 409 || !a.problem(t).is("refund-window-closed") {
		t.Errorf("after the window = %d %s, want 409 refund-window-closed", a.StatusCode, a.raw)
	}
	a = s.refund(t, s.org, true, o.Id.String(), "", "")
	got = as[apiclient.Order](t, a)
	if a.StatusCode != 200 || got.Status != "refunded" || deref(got.RefundedCents) != int64(o.TotalCents) || len(deref(got.Refunds)) != 2 {
		t.Errorf("the organizer's refund of the rest = %d %s, want 200 refunded", a.StatusCode, a.raw)
	}
	for _, tk := range got.Tickets {
		if tk.Code != nil {
			t.Errorf("the organizer's answer shows ticket %s's door code", tk.Id.String())
		}
	}
	s.noViolations(t)
}

// TestARefundPayrailCannotAnswerIs202: while Payrail answers 500, a refund
// is 202 with the order (Location names it), the ticket refund_pending and
// refused at the door; once Payrail answers again, the refund pass settles
// it: the order reads partially_refunded, the ticket refunded.
func TestARefundPayrailCannotAnswerIs202(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newShop(t, 0)
	s.openRefunds(t)
	ada := newAccount(t, s.testServer, auth.Buyer)
	o := s.buy(t, ada, s.seats[0], s.seats[1])
	s.payrail.down.Store(true)
	a := s.refund(t, ada, false, o.Id.String(), "", fmt.Sprintf(`{"ticket_ids":[%q]}`, o.Tickets[0].Id.String()))
	got := as[apiclient.Order](t, a)
	if a.StatusCode != 202 || a.Header.Get("Location") != "/v1/orders/"+o.Id.String() || got.Status != "confirmed" ||
		ticketStatus(got, o.Tickets[0].Id.String()) != "refund_pending" || len(deref(got.Refunds)) == 0 || (*got.Refunds)[0].Status != "pending" {
		t.Fatalf("a refund Payrail cannot answer = %d %s, want 202 pending", a.StatusCode, a.raw)
	}
	_, door := newScannerKey(t, s.testServer, s.org, s.event)
	wantRejected(t, "a scan of a ticket pending its refund", s.scanTB(t, door, *o.Tickets[0].Code), 409, "revoked")
	s.payrail.down.Store(false)
	waitFor(t, 10*time.Second, "the refund pass to settle the refund", func() bool {
		if _, err := s.Checkout.Refunds(ctx); err != nil {
			t.Fatal(err)
		}
		return as[apiclient.Order](t, s.request(t, "GET", "/v1/orders/"+o.Id.String(), "", ada.bearer()...)).Status == "partially_refunded"
	})
	s.noViolations(t)
}

// TestAnOrganizerChangesAnEventOverHTTP: PATCH changes the name, the
// description and the refund window (200 with the organizer's view); an
// empty change, a bad time and a window after the start are 400; another
// organizer's is 404; once a ticket is sold, removing the window is 409
// change-breaks-tickets. The public event shows the change within a second.
func TestAnOrganizerChangesAnEventOverHTTP(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	path := "/v1/organizer/events/" + s.event
	a := s.request(t, "PATCH", path, `{"name":"Late show","description":"Doors at 7.\n\nNo re-entry."}`, s.org.bearer()...)
	if got := as[apiclient.OrganizerEvent](t, a); a.StatusCode != 200 || got.Name != "Late show" || got.Description != "Doors at 7.\n\nNo re-entry." ||
		got.Status != "scheduled" || got.RefundsUntil != nil || got.Cancellation != nil {
		t.Fatalf("PATCH = %d %s", a.StatusCode, a.raw)
	}
	for name, body := range map[string]string{
		"empty":                 `{}`,
		"a bad time":            `{"starts_at":"tomorrow"}`,
		"a window past the end": fmt.Sprintf(`{"refunds_until":%q}`, time.Now().Add(60*24*time.Hour).UTC().Format(time.RFC3339)),
		"an unknown field":      `{"currency":"EUR"}`,
	} {
		if a := s.request(t, "PATCH", path, body, s.org.bearer()...); a.StatusCode != 400 {
			t.Errorf("%s = %d %s, want 400", name, a.StatusCode, a.raw)
		}
	}
	if a := s.request(t, "PATCH", path, `{"name":"X"}`, newAccount(t, s.testServer, auth.Organizer).bearer()...); a.StatusCode != 404 {
		t.Errorf("another organizer = %d %s, want 404", a.StatusCode, a.raw)
	}
	s.openRefunds(t)
	s.buy(t, newAccount(t, s.testServer, auth.Buyer), s.seats[0])
	if a := s.request(t, "PATCH", path, `{"refunds_until":null}`, s.org.bearer()...); a.StatusCode != 409 || !a.problem(t).is("change-breaks-tickets") {
		t.Errorf("removing the window once sold = %d %s, want 409 change-breaks-tickets", a.StatusCode, a.raw)
	}
	waitFor(t, 5*time.Second, "the public event to show the change", func() bool {
		e := as[apiclient.Event](t, s.request(t, "GET", "/v1/events/"+s.event, ""))
		return e.Name == "Late show" && e.RefundsUntil != nil
	})
}

// TestACancelReachesEveryInstance: two instances of one deployment; a buyer's
// order and another's hold, made through the second. The organizer cancels
// through the first: 202, the event cancelled with its progress. At once, on
// the second: a hold and the checkout of the hold already made are 409
// event-cancelled, and a PATCH of the event too. The first's refund job
// refunds the order: the organizer's event reads done, the buyer's order
// refunded. Cancelling again is 202 and changes nothing.
func TestACancelReachesEveryInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newShop(t, 0)
	second := startInstance(t, instance{db: s.DB, redisPrefix: s.Config.RedisPrefix,
		env: limitEnv("PAYRAIL_URL", s.payrail.url, "STAGEDOOR_LIMIT_HOLD_BUYER", "100/1s")})
	b := &shop{testServer: second, payrail: s.payrail, org: s.org, event: s.event, seats: s.seats}
	ada, bob := newAccount(t, second, auth.Buyer), newAccount(t, second, auth.Buyer)
	o := b.buy(t, ada, s.seats[0])
	bobsHold := b.hold(t, bob, s.seats[1])

	a := s.request(t, "POST", "/v1/organizer/events/"+s.event+"/cancel", "", s.org.bearer()...)
	got := as[apiclient.OrganizerEvent](t, a)
	if a.StatusCode != 202 || got.Status != "cancelled" || got.Cancellation == nil || got.Cancellation.Orders != 1 {
		t.Fatalf("cancel = %d %s, want 202 cancelled with its progress", a.StatusCode, a.raw)
	}
	if a := second.request(t, "POST", "/v1/holds", holdBody(s.event, s.seats[2]), bob.bearer()...); a.StatusCode != 409 || !a.problem(t).is("event-cancelled") {
		t.Errorf("a hold on the other instance = %d %s, want 409 event-cancelled", a.StatusCode, a.raw)
	}
	if a := b.checkout(t, bob, orderBody(bobsHold, "tok_visa"), ""); a.StatusCode != 409 || !a.problem(t).is("event-cancelled") {
		t.Errorf("a checkout on the other instance = %d %s, want 409 event-cancelled", a.StatusCode, a.raw)
	}
	if a := second.request(t, "PATCH", "/v1/organizer/events/"+s.event, `{"name":"Y"}`, s.org.bearer()...); a.StatusCode != 409 || !a.problem(t).is("event-cancelled") {
		t.Errorf("a change on the other instance = %d %s, want 409 event-cancelled", a.StatusCode, a.raw)
	}
	waitFor(t, 10*time.Second, "the cancellation's refunds to be done", func() bool {
		if _, err := s.Checkout.Refunds(ctx); err != nil {
			t.Fatal(err)
		}
		e := as[apiclient.OrganizerEvent](t, second.request(t, "GET", "/v1/organizer/events/"+s.event, "", s.org.bearer()...))
		return e.Cancellation != nil && e.Cancellation.Done
	})
	if got := as[apiclient.Order](t, second.request(t, "GET", "/v1/orders/"+o.Id.String(), "", ada.bearer()...)); got.Status != "refunded" ||
		len(deref(got.Refunds)) == 0 || (*got.Refunds)[0].Reason != "cancellation" {
		t.Errorf("the buyer's order = %+v, want refunded by the cancellation", got)
	}
	if a := s.request(t, "POST", "/v1/organizer/events/"+s.event+"/cancel", "", s.org.bearer()...); a.StatusCode != 202 ||
		!as[apiclient.OrganizerEvent](t, a).Cancellation.Done {
		t.Errorf("cancelling again = %d %s, want 202, done", a.StatusCode, a.raw)
	}
	if a := s.request(t, "POST", "/v1/organizer/events/"+s.event+"/cancel", "", newAccount(t, s.testServer, auth.Organizer).bearer()...); a.StatusCode != 404 {
		t.Errorf("another organizer's cancel = %d %s, want 404", a.StatusCode, a.raw)
	}
	if a := s.request(t, "GET", "/v1/organizer/events", "", s.org.bearer()...); a.StatusCode != http.StatusOK {
		t.Errorf("the organizer's list = %d %s", a.StatusCode, a.raw)
	}
	s.noViolations(t)
}
