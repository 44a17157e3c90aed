package boxoffice

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// venue is the services of one Stagedoor on a database of the test's own,
// charging through a real Payrail stub, with an organizer and an event of
// two sections (the second named as a formula) of one row of four seats.
type venue struct {
	db        *pgxpool.Pool
	queries   *atomic.Int64 // statements sent on db
	accounts  *auth.Service
	events    *event.Service
	holds     *hold.Service
	checkout  *checkout.Service
	scans     *scan.Service
	office    *Service
	organizer string
	event     string
	seats     []string // in seat-map order
}

func newVenue(t *testing.T) *venue {
	t.Helper()
	ctx := context.Background()
	v := &venue{queries: new(atomic.Int64)}
	cfg, err := pgxpool.ParseConfig(testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = countQueries{v.queries}
	if v.db, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.db.Close)
	pay, err := payrail.Open(ctx, v.db, payrail.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(pay)
	t.Cleanup(server.Close)
	keys := ticketsign.NewKeys(v.db)
	v.events = event.NewService(v.db, hold.CreateSeats)
	v.accounts = auth.NewService(v.db, 4).WithEvents(v.events)
	v.holds = hold.NewService(v.db, v.events, time.Minute, 10)
	v.checkout = checkout.NewService(v.db, checkout.NewPayments(checkout.PaymentsOptions{BaseURL: server.URL}),
		checkout.Options{RecoverAfter: time.Minute, TicketKeys: keys, Events: v.events})
	v.scans = scan.NewService(v.db, keys)
	v.office = New(v.events, v.checkout, v.scans, v.accounts, v.holds)
	v.organizer = v.account(t, auth.Organizer, "org-"+ids.New()+"@example.com").ID
	_, seats := v.open(t, "Night",
		event.Section{Name: "Floor", Rows: 1, SeatsPerRow: 4, PriceCents: 1000},
		event.Section{Name: "=HYPERLINK(\"http://x\")", Rows: 1, SeatsPerRow: 4, PriceCents: 2000})
	for _, s := range seats {
		v.seats = append(v.seats, s.ID)
	}
	return v
}

// open creates the organizer's event of these sections at the Hall, a day
// away, and makes it the venue's event: the event and its seat map's seats.
func (v *venue) open(t *testing.T, name string, sections ...event.Section) (event.Event, []event.Seat) {
	t.Helper()
	ctx := context.Background()
	ev, err := v.events.Create(ctx, event.Draft{OrganizerID: v.organizer, Name: name, Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour), Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	v.event = ev.ID
	m, err := v.events.SeatMap(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ev, m.Seats
}

// account signs up an account with this email.
func (v *venue) account(t *testing.T, kind auth.Kind, email string) auth.Account {
	t.Helper()
	a, err := v.accounts.Register(context.Background(), kind, email, "correct horse", "Someone")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// buy holds the seats for the buyer and checks out with the payment token
// (tok_visa pays, tok_declined is declined): the order, as checkout answered.
func (v *venue) buy(t *testing.T, buyerID, token string, seats ...string) checkout.Order {
	t.Helper()
	h := v.hold(t, buyerID, seats...)
	res, err := v.checkout.Checkout(context.Background(), checkout.Request{BuyerID: buyerID, HoldID: h.ID, PaymentToken: token})
	if token == "tok_visa" && err != nil {
		t.Fatal(err)
	}
	return res.Order
}

// countQueries counts the statements a pool sends.
type countQueries struct{ n *atomic.Int64 }

func (c countQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (countQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// hold holds the seats for the buyer.
func (v *venue) hold(t *testing.T, buyerID string, seats ...string) hold.Hold {
	t.Helper()
	ctx := context.Background()
	p, err := v.holds.Plan(ctx, buyerID, v.event, seats)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v.holds.Place(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// buyPlaces holds places of general admission for the buyer and pays.
func (v *venue) buyPlaces(t *testing.T, buyerID string, places ...hold.General) checkout.Order {
	t.Helper()
	ctx := context.Background()
	p, err := v.holds.Plan(ctx, buyerID, v.event, nil, places...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v.holds.Place(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.checkout.Checkout(ctx, checkout.Request{BuyerID: buyerID, HoldID: h.ID, PaymentToken: "tok_visa"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Order
}

// refund has the organizer refund the order's tickets (none named: all).
func (v *venue) refund(t *testing.T, orderID string, ticketIDs ...string) {
	t.Helper()
	res, err := v.checkout.Refund(context.Background(),
		checkout.RefundRequest{AccountID: v.organizer, Organizer: true, OrderID: orderID, TicketIDs: ticketIDs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Refund.Status != "succeeded" {
		t.Fatalf("the refund of order %s = %+v", orderID, res.Refund)
	}
}
