package boxoffice

import (
	"context"
	"errors"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// TestSalesCountEachSectionAndTheMoney: an event of a seated section (two
// rows of three at $30) and one of general admission (ten places at $15).
// Ada buys two seats and is refunded one, Bea three places (one scanned at
// the door), Cy holds a seat, Dan's card is declined (his seat stays held for
// another try), Eve buys a seat and is refunded whole. The dashboard counts
// each section's seats sold, held and available and their revenue, the
// orders by status and the money kept, and the check-ins; in at most four
// statements. Only the event's organizer reads them.
func TestSalesCountEachSectionAndTheMoney(t *testing.T) {
	t.Parallel()
	v := newVenue(t)
	ctx := context.Background()
	ev, seats := v.open(t, "Mixed",
		event.Section{Name: "Stalls", Rows: 2, SeatsPerRow: 3, PriceCents: 3000},
		event.Section{Name: "Floor", GeneralAdmission: true, Capacity: 10, PriceCents: 1500})
	seat := map[string]string{} // "A1" → its id
	for _, s := range seats {
		seat[s.Row+string(rune('0'+s.Number))] = s.ID
	}
	floor := ev.Sections[1].ID

	empty, err := v.office.Sales(ctx, v.organizer, ev.ID)
	if err != nil || len(empty.Sections) != 2 || empty.Capacity != 16 || empty.TicketsSold != 0 ||
		empty.Sections[1].Available != 10 || empty.Orders.NetCents != 0 || empty.CheckIns != (scan.CheckIns{}) {
		t.Fatalf("the sales of an event that sold nothing = %+v, %v", empty, err)
	}

	buyer := func(name string) string { return v.account(t, auth.Buyer, name+"-"+ids.New()+"@example.com").ID }
	ada, bea, cy, dan, eve := buyer("ada"), buyer("bea"), buyer("cy"), buyer("dan"), buyer("eve")
	adas := v.buy(t, ada, "tok_visa", seat["A1"], seat["A2"])
	beas := v.buyPlaces(t, bea, hold.General{SectionID: floor, Quantity: 3})
	v.hold(t, cy, seat["B1"])
	v.buy(t, dan, "tok_declined", seat["B2"])
	eves := v.buy(t, eve, "tok_visa", seat["A3"])
	var a2 string
	for _, tk := range adas.Tickets {
		if tk.SeatID == seat["A2"] {
			a2 = tk.ID
		}
	}
	v.refund(t, adas.ID, a2)
	v.refund(t, eves.ID)
	key, err := v.accounts.CreateScannerKey(ctx, v.organizer, "Gate", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.scans.Scan(ctx, scan.Scanner{KeyID: key.ID, OrganizerID: v.organizer}, beas.Tickets[0].Code); err != nil {
		t.Fatal(err)
	}

	// The sales read the event from its snapshot, fresh for event.SnapshotMaxAge:
	// read it now, so that the set-up above (seconds on a busy machine) has not
	// left it stale, and the count is the sales' own.
	if _, err := v.events.Info(ctx, ev.ID); err != nil {
		t.Fatal(err)
	}
	before := v.queries.Load()
	got, err := v.office.Sales(ctx, v.organizer, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := v.queries.Load() - before; n > 4 {
		t.Errorf("the sales took %d statements, want at most 4 (the event, seats, orders, tickets)", n)
	}
	want := []SectionSales{
		{ID: ev.Sections[0].ID, Name: "Stalls", PriceCents: 3000, Capacity: 6, Sold: 1, Held: 2, Available: 3, RevenueCents: 3000},
		{ID: floor, Name: "Floor", GeneralAdmission: true, PriceCents: 1500, Capacity: 10, Sold: 3, Held: 0, Available: 7, RevenueCents: 4500},
	}
	if len(got.Sections) != len(want) {
		t.Fatalf("sections = %+v, want %+v", got.Sections, want)
	}
	for i := range want {
		if got.Sections[i] != want[i] {
			t.Errorf("section %d = %+v, want %+v", i, got.Sections[i], want[i])
		}
	}
	if got.Currency != "USD" || got.Capacity != 16 || got.TicketsSold != 4 || got.TicketsHeld != 2 {
		t.Errorf("totals = %s, capacity %d, sold %d, held %d; want USD, 16, 4, 2", got.Currency, got.Capacity, got.TicketsSold, got.TicketsHeld)
	}
	wantOrders := checkout.OrderSales{Confirmed: 1, PartiallyRefunded: 1, Refunded: 1,
		GrossCents: 6000 + 4500 + 3000, RefundedCents: 3000 + 3000, NetCents: 7500}
	if got.Orders != wantOrders {
		t.Errorf("orders = %+v, want %+v", got.Orders, wantOrders)
	}
	if got.CheckIns != (scan.CheckIns{Admitting: 4, Scanned: 1}) {
		t.Errorf("check-ins = %+v, want 1 scanned of 4", got.CheckIns)
	}
	revenue, err := v.checkout.Revenue(ctx, []string{ev.ID})
	if err != nil || revenue[ev.ID] != got.Orders.NetCents {
		t.Errorf("the event list's revenue = %d, %v; the dashboard's %d", revenue[ev.ID], err, got.Orders.NetCents)
	}

	stranger := v.account(t, auth.Organizer, "org-"+ids.New()+"@example.com")
	for _, c := range []struct{ name, organizer, event string }{
		{"another organizer", stranger.ID, ev.ID},
		{"a buyer", ada, ev.ID},
		{"no such event", v.organizer, ids.New()},
		{"an event id that is no id", v.organizer, "42"},
	} {
		if _, err := v.office.Sales(ctx, c.organizer, c.event); !errors.Is(err, errkind.NotFound) {
			t.Errorf("%s: %v, want not found", c.name, err)
		}
	}
}
