package httpapi_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// organizerOrderPage is a page of GET /v1/organizer/events/{id}/orders.
type organizerOrderPage struct {
	Orders    []apiclient.OrganizerOrder `json:"orders"`
	NextAfter *string                    `json:"next_after"`
}

// TestTheBoxOfficeIsItsOrganizers: the organizer pages through the event's
// orders, newest first, one a page, each with its buyer's email and its
// tickets; the attendee list is a CSV download of the tickets that admit.
// Another organizer gets 404, a buyer 403, a cursor the list did not give 400.
func TestTheBoxOfficeIsItsOrganizers(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada, bea := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	adas, beas := s.buy(t, ada, s.seats[0], s.seats[1]), s.buy(t, bea, s.seats[2])
	orders := "/v1/organizer/events/" + s.event + "/orders"

	a := s.request(t, "GET", orders+"?limit=1", "", s.org.bearer()...)
	first := as[organizerOrderPage](t, a)
	if a.StatusCode != 200 || len(first.Orders) != 1 || first.Orders[0].Id != beas.Id || first.NextAfter == nil {
		t.Fatalf("the first page = %d %s, want bea's order and a next page", a.StatusCode, a.raw)
	}
	if o := first.Orders[0]; string(o.BuyerEmail) != bea.email || o.TotalCents != 4500 || o.Currency != "USD" || o.Status != "confirmed" ||
		len(o.Tickets) != 1 || o.Tickets[0].Id != beas.Tickets[0].Id || o.Tickets[0].Seat.Section != "Floor" ||
		o.Tickets[0].Seat.Row != "A" || o.Tickets[0].Seat.Number != 3 || o.Tickets[0].Status != "valid" || string(o.Tickets[0].HolderEmail) != bea.email ||
		o.Tickets[0].Reference != beas.Tickets[0].Reference || o.Tickets[0].Reference == "" {
		t.Errorf("bea's order = %+v", o)
	}
	a = s.request(t, "GET", orders+"?limit=1&after="+*first.NextAfter, "", s.org.bearer()...)
	second := as[organizerOrderPage](t, a)
	if a.StatusCode != 200 || len(second.Orders) != 1 || second.Orders[0].Id != adas.Id || len(second.Orders[0].Tickets) != 2 || second.NextAfter != nil {
		t.Fatalf("the second page = %d %s, want ada's order, the last", a.StatusCode, a.raw)
	}
	if !strings.Contains(string(a.raw), `"next_after":null`) {
		t.Errorf("the last page's next_after is not null: %s", a.raw)
	}

	a = s.request(t, "GET", "/v1/organizer/events/"+s.event+"/attendees.csv", "", s.org.bearer()...)
	if a.StatusCode != 200 || a.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		a.Header.Get("Content-Disposition") != `attachment; filename="attendees-`+s.event+`.csv"` {
		t.Fatalf("the attendee list = %d %v", a.StatusCode, a.Header)
	}
	records, err := csv.NewReader(strings.NewReader(string(a.raw))).ReadAll()
	if err != nil || len(records) != 4 || records[0][0] != "ticket_id" || records[1][2] != ada.email || records[3][2] != bea.email ||
		records[3][0] != beas.Tickets[0].Id.String() || records[3][5] != "3" || records[3][6] != "valid" {
		t.Errorf("the attendee list reads %q, %v", records, err)
	}

	stranger := newAccount(t, s.testServer, auth.Organizer)
	for _, path := range []string{orders, "/v1/organizer/events/" + s.event + "/attendees.csv"} {
		if a := s.request(t, "GET", path, "", stranger.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
			t.Errorf("another organizer's %s = %d %s, want 404", path, a.StatusCode, a.raw)
		}
		if a := s.request(t, "GET", path, "", ada.bearer()...); a.StatusCode != 403 {
			t.Errorf("a buyer's %s = %d %s, want 403", path, a.StatusCode, a.raw)
		}
	}
	for _, query := range []string{"?after=bm90LWEtY3Vyc29y", "?limit=0", "?limit=101"} {
		if a := s.request(t, "GET", orders+query, "", s.org.bearer()...); a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
			t.Errorf("orders%s = %d %s, want 400", query, a.StatusCode, a.raw)
		}
	}
}

// TestTheSalesAreTheOrganizers: the organizer reads the event's sales (two
// seats sold, one held, $90 taken, nothing scanned yet), checked against the
// contract; another organizer and an unknown event get 404, a buyer 403 (as
// on every organizer route: the wrong kind of account), no session 401.
func TestTheSalesAreTheOrganizers(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada, bea := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	if a := s.checkout(t, ada, orderBody(s.hold(t, ada, s.seats[0], s.seats[1]), "tok_visa"), ""); a.StatusCode != 201 {
		t.Fatalf("ada's order = %d %s", a.StatusCode, a.raw)
	}
	s.hold(t, bea, s.seats[5])
	sales := "/v1/organizer/events/" + s.event + "/sales"

	a := s.request(t, "GET", sales, "", s.org.bearer()...)
	got := as[apiclient.EventSales](t, a)
	if a.StatusCode != 200 || got.Currency != "USD" || got.Capacity != 40 || got.TicketsSold != 2 || got.TicketsHeld != 1 ||
		got.RevenueCents != 9000 || got.Orders.Confirmed != 1 || got.Orders.Pending != 0 ||
		got.CheckIns.Scanned != 0 || got.CheckIns.Admitting != 2 || len(got.Sections) != 1 {
		t.Fatalf("the sales = %d %s", a.StatusCode, a.raw)
	}
	if sec := got.Sections[0]; sec.Name != "Floor" || sec.Capacity != 40 || sec.Sold != 2 || sec.Held != 1 || sec.Available != 37 || sec.RevenueCents != 9000 {
		t.Errorf("the section's sales = %+v", sec)
	}

	stranger := newAccount(t, s.testServer, auth.Organizer)
	for _, c := range []struct {
		name, path string
		header     []string
		status     int
	}{
		{"another organizer", sales, stranger.bearer(), 404},
		{"an unknown event", "/v1/organizer/events/" + ids.New() + "/sales", s.org.bearer(), 404},
		{"a buyer", sales, ada.bearer(), 403},
		{"no session", sales, nil, 401},
	} {
		if a := s.request(t, "GET", c.path, "", c.header...); a.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, a.StatusCode, a.raw, c.status)
		}
	}
}
