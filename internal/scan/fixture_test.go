package scan

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// door is a database with one organizer's two events (4 seats each), a buyer
// who bought every seat of both (one order an event, its tickets issued with
// IssueTickets, as checkout does), and the scan service.
type door struct {
	db        *pgxpool.Pool
	scans     *Service
	accounts  *auth.Service
	organizer string
	buyer     string
	events    [2]string
	orders    [2]string
	codes     [2][]string // each event's tickets' codes, in seat order
	tickets   [2][]string // their ids
}

func newDoor(t *testing.T) *door {
	t.Helper()
	ctx := context.Background()
	d := &door{db: testenv.Postgres(t)}
	events := event.NewService(d.db, hold.CreateSeats)
	d.accounts = auth.NewService(d.db, 4).WithEvents(events)
	d.scans = NewService(d.db, nil)
	org, err := d.accounts.Register(ctx, auth.Organizer, "org-"+ids.New()+"@example.com", "correct horse", "Org")
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := d.accounts.Register(ctx, auth.Buyer, "buyer-"+ids.New()+"@example.com", "correct horse", "Buyer")
	if err != nil {
		t.Fatal(err)
	}
	d.organizer, d.buyer = org.ID, buyer.ID
	holds := hold.NewService(d.db, events, time.Minute, 10)
	for i := range d.events {
		ev, err := events.Create(ctx, event.Draft{OrganizerID: d.organizer, Name: "Night", Venue: "Hall",
			StartsAt: time.Now().Add(24 * time.Hour), Sections: []event.Section{{Name: "Floor", Rows: 1, SeatsPerRow: 4, PriceCents: 100}}})
		if err != nil {
			t.Fatal(err)
		}
		d.events[i] = ev.ID
		m, err := events.SeatMap(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		var seatIDs []string
		for _, s := range m.Seats {
			seatIDs = append(seatIDs, s.ID)
		}
		d.orders[i], d.tickets[i], d.codes[i] = d.buy(t, holds, ev.ID, seatIDs)
	}
	return d
}

// buy holds the seats, sells them (as a checkout does, in one transaction)
// and issues their tickets (tryBuy, failing the test on its error).
func (d *door) buy(t *testing.T, holds *hold.Service, eventID string, seatIDs []string) (orderID string, ticketIDs, codes []string) {
	t.Helper()
	orderID, ticketIDs, codes, err := d.tryBuy(holds, eventID, seatIDs)
	if err != nil {
		t.Fatal(err)
	}
	return orderID, ticketIDs, codes
}

// scanner makes a scanner key of the organizer, bound to eventID unless it is
// empty.
func (d *door) scanner(t *testing.T, eventID string) Scanner {
	t.Helper()
	k, err := d.accounts.CreateScannerKey(context.Background(), d.organizer, "Gate", eventID)
	if err != nil {
		t.Fatal(err)
	}
	return Scanner{KeyID: k.ID, OrganizerID: d.organizer, EventID: eventID}
}

// admittedRows counts the ticket's admitted rows in the audit.
func (d *door) admittedRows(t *testing.T, ticketID string) int {
	t.Helper()
	var n int
	if err := d.db.QueryRow(context.Background(),
		`SELECT count(*) FROM scans WHERE ticket_id = $1 AND result = 'admitted'`, ticketID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// scanAtOnce has devices scan at the same moment, device i the code code(i)
// through scanners[i%len(scanners)]: the admissions and the rejections. Any
// other error fails the test.
func (d *door) scanAtOnce(t *testing.T, scanners []Scanner, devices int, code func(i int) string) ([]Admission, []*Rejection) {
	t.Helper()
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		mu       sync.Mutex
		admitted []Admission
		rejected []*Rejection
	)
	for i := range devices {
		wg.Go(func() {
			<-start
			a, err := d.scans.Scan(context.Background(), scanners[i%len(scanners)], code(i))
			mu.Lock()
			defer mu.Unlock()
			var r *Rejection
			switch {
			case err == nil:
				admitted = append(admitted, a)
			case errors.As(err, &r):
				rejected = append(rejected, r)
			default:
				t.Errorf("scan: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	return admitted, rejected
}
