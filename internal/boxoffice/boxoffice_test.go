package boxoffice

import (
	"context"
	"errors"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// TestOrdersArePagesOfTheEventsSales: three orders paid and one declined;
// pages of two, newest first: the declined one is left out, each order names
// its buyer's email and total, and its tickets by seat, one transferred
// beside its successor, each with its holder's email. Only the organizer
// reads them.
func TestOrdersArePagesOfTheEventsSales(t *testing.T) {
	t.Parallel()
	v := newVenue(t)
	ctx := context.Background()
	ada := v.account(t, auth.Buyer, "ada-"+ids.New()+"@example.com")
	bea := v.account(t, auth.Buyer, "bea-"+ids.New()+"@example.com")
	cy := v.account(t, auth.Buyer, "cy-"+ids.New()+"@example.com")
	eve := v.account(t, auth.Buyer, "eve-"+ids.New()+"@example.com")
	adas := v.buy(t, ada.ID, "tok_visa", v.seats[1], v.seats[0])
	beas := v.buy(t, bea.ID, "tok_visa", v.seats[4])
	v.buy(t, cy.ID, "tok_declined", v.seats[5])
	cys := v.buy(t, cy.ID, "tok_visa", v.seats[2])
	var gift scan.Ticket
	for _, tk := range adas.Tickets {
		if tk.SeatID == v.seats[1] {
			gift = tk.Ticket
		}
	}
	moved, err := v.scans.Transfer(ctx, scan.Transfer{HolderID: ada.ID, TicketID: gift.ID, Email: eve.Email})
	if err != nil {
		t.Fatal(err)
	}

	first, err := v.office.Orders(ctx, v.organizer, v.event, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Orders) != 2 || first.Orders[0].ID != cys.ID || first.Orders[1].ID != beas.ID || first.NextAfter == "" {
		t.Fatalf("the first page = %+v, want cy's and bea's orders and a next page", first)
	}
	if o := first.Orders[1]; o.BuyerEmail != bea.Email || o.TotalCents != 2000 || o.Status != checkout.Confirmed ||
		len(o.Tickets) != 1 || o.Tickets[0].Seat.Section != `=HYPERLINK("http://x")` || o.Tickets[0].Seat.Row != "A" ||
		o.Tickets[0].Seat.Number != 1 || o.Tickets[0].Status != "valid" || o.Tickets[0].HolderEmail != bea.Email {
		t.Errorf("bea's order = %+v", o)
	}
	second, err := v.office.Orders(ctx, v.organizer, v.event, 2, first.NextAfter)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Orders) != 1 || second.Orders[0].ID != adas.ID || second.NextAfter != "" {
		t.Fatalf("the second page = %+v, want ada's order, the last", second)
	}
	got := second.Orders[0]
	want := []Ticket{
		{Seat: scan.Seat{Section: "Floor", Row: "A", Number: 1}, Status: "valid", HolderEmail: ada.Email},
		{ID: gift.ID, Seat: scan.Seat{Section: "Floor", Row: "A", Number: 2}, Status: "transferred", HolderEmail: ada.Email},
		{ID: moved.New.ID, Seat: scan.Seat{Section: "Floor", Row: "A", Number: 2}, Status: "valid", HolderEmail: eve.Email},
	}
	if got.BuyerEmail != ada.Email || got.TotalCents != 2000 || len(got.Tickets) != len(want) {
		t.Fatalf("ada's order = %+v", got)
	}
	for i, w := range want {
		g := got.Tickets[i]
		if g.Seat != w.Seat || g.Status != w.Status || g.HolderEmail != w.HolderEmail || w.ID != "" && g.ID != w.ID {
			t.Errorf("ada's ticket %d = %+v, want %+v", i, g, w)
		}
	}

	stranger := v.account(t, auth.Organizer, "org-"+ids.New()+"@example.com")
	for _, c := range []struct {
		name, organizer, event, after string
		limit                         int
		want                          error
	}{
		{"another organizer", stranger.ID, v.event, "", 0, errkind.NotFound},
		{"no such event", v.organizer, ids.New(), "", 0, errkind.NotFound},
		{"an event id that is no id", v.organizer, "42", "", 0, errkind.NotFound},
		{"a cursor this list did not give", v.organizer, v.event, "bm90IGEgY3Vyc29y", 0, errkind.Invalid},
		{"a page too long", v.organizer, v.event, "", 101, errkind.Invalid},
	} {
		if _, err := v.office.Orders(ctx, c.organizer, c.event, c.limit, c.after); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestAnEventWithoutOrdersHasAnEmptyPage: an empty list, not a missing one.
func TestAnEventWithoutOrdersHasAnEmptyPage(t *testing.T) {
	t.Parallel()
	v := newVenue(t)
	page, err := v.office.Orders(context.Background(), v.organizer, v.event, 0, "")
	if err != nil || page.Orders == nil || len(page.Orders) != 0 || page.NextAfter != "" {
		t.Errorf("the page of an event without orders = %+v, %v", page, err)
	}
}
