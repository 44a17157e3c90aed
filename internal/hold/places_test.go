package hold

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// placesFixture is an event of a seated section S (3 seats at 100) and a
// section of general admission, Lawn (places at 1500), and one buyer.
type placesFixture struct {
	fixture
	lawn  string // Lawn's section id
	floor string // S's section id
}

// newPlacesFixture makes it on db (a fresh database when nil), with lawn
// places of Lawn and holds capped at maxHeld seats and places.
func newPlacesFixture(t *testing.T, db *pgxpool.Pool, lawn, maxHeld int) placesFixture {
	t.Helper()
	ctx := context.Background()
	if db == nil {
		db = testenv.Postgres(t)
	}
	events := event.NewService(db, CreateSeats)
	ev, err := events.Create(ctx, event.Draft{
		OrganizerID: newAccount(t, db, "organizer"), Name: "E", Venue: "V", StartsAt: time.Now().Add(time.Hour),
		Sections: []event.Section{
			{Name: "S", Rows: 1, SeatsPerRow: 3, PriceCents: 100},
			{Name: "Lawn", GeneralAdmission: true, Capacity: lawn, PriceCents: 1500},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := placesFixture{
		fixture: fixture{db: db, holds: NewService(db, events, time.Minute, maxHeld), eventID: ev.ID, buyer: newAccount(t, db, "buyer")},
		floor:   ev.Sections[0].ID, lawn: ev.Sections[1].ID,
	}
	if f.seats = seatsOf(t, db, ev.ID); len(f.seats) != 3 {
		t.Fatalf("seats %v", f.seats)
	}
	return f
}

// placeFor places a hold of the buyer's: seats, and quantity places of Lawn.
func (f placesFixture) placeFor(buyer string, quantity int, seats ...string) (Hold, error) {
	ctx := context.Background()
	p, err := f.holds.Plan(ctx, buyer, f.eventID, seats, General{SectionID: f.lawn, Quantity: quantity})
	if err != nil {
		return Hold{}, err
	}
	return f.holds.Place(ctx, p)
}

// free counts the places of Lawn that no one holds and no one bought.
func (f placesFixture) free(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM seats WHERE event_id = $1 AND row_label = ''
		AND sold_at IS NULL AND (held_until IS NULL OR held_until <= now())`, f.eventID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAHoldTakesPlacesOfASection: a hold of 2 places of Lawn and a seat takes
// both places (rows of seats of Lawn, now the hold's), at Lawn's price, and
// says so: its seat ids are the seat's, then the places', and General counts
// the places by section, as Get reads it back. Released, its places are free
// again.
func TestAHoldTakesPlacesOfASection(t *testing.T) {
	t.Parallel()
	f := newPlacesFixture(t, nil, 5, 10)
	ctx := context.Background()
	h, err := f.placeFor(f.buyer, 2, f.seats[1])
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCents != 3100 || len(h.SeatIDs) != 3 || h.SeatIDs[0] != f.seats[1] ||
		len(h.General) != 1 || h.General[0] != (SectionPlaces{SectionID: f.lawn, Section: "Lawn", Quantity: 2}) {
		t.Fatalf("placed %+v; want the seat and 2 places of Lawn, 3100", h)
	}
	var places int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM seats WHERE id = ANY($1::uuid[]) AND hold_id = $2
		AND section = 'Lawn' AND row_label = '' AND held_until > now()`, h.SeatIDs[1:], h.ID).Scan(&places); err != nil || places != 2 {
		t.Fatalf("%d of the hold's places are Lawn's and held by it (%v), want 2", places, err)
	}
	got, err := f.holds.Get(ctx, f.buyer, h.ID)
	if err != nil || len(got.SeatIDs) != 3 || len(got.General) != 1 || got.General[0] != h.General[0] {
		t.Errorf("Get = %+v, %v; want its seat ids and 2 places of Lawn", got, err)
	}
	if f.free(t) != 3 {
		t.Errorf("%d places of Lawn free while 2 of 5 are held, want 3", f.free(t))
	}
	if err := f.holds.Release(ctx, f.buyer, h.ID); err != nil {
		t.Fatal(err)
	}
	if f.free(t) != 5 {
		t.Errorf("%d places of Lawn free after the release, want 5", f.free(t))
	}
	onlyPlaces, err := f.placeFor(f.buyer, 5)
	if err != nil || len(onlyPlaces.SeatIDs) != 5 || onlyPlaces.TotalCents != 7500 {
		t.Errorf("a hold of the 5 places alone = %+v, %v", onlyPlaces, err)
	}
}

// TestABadRequestForPlacesChangesNothing: an unknown section, a seated section
// named in general, a quantity below 1, a section named twice, more than 10
// seats and places together, and a place's id given as a seat are each a
// errkind.Invalid error that says so, and nothing is held.
func TestABadRequestForPlacesChangesNothing(t *testing.T) {
	t.Parallel()
	f := newPlacesFixture(t, nil, 20, 10)
	ctx := context.Background()
	var place string
	if err := f.db.QueryRow(ctx, `SELECT id::text FROM seats WHERE event_id = $1 AND row_label = '' LIMIT 1`, f.eventID).Scan(&place); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		seats   []string
		general []General
	}{
		"an unknown section":    {nil, []General{{SectionID: ids.New(), Quantity: 1}}},
		"a malformed section":   {nil, []General{{SectionID: "lawn", Quantity: 1}}},
		"a seated section":      {nil, []General{{SectionID: f.floor, Quantity: 1}}},
		"no place":              {nil, []General{{SectionID: f.lawn, Quantity: 0}}},
		"a negative quantity":   {f.seats[:1], []General{{SectionID: f.lawn, Quantity: -1}}},
		"a section named twice": {nil, []General{{SectionID: f.lawn, Quantity: 1}, {SectionID: f.lawn, Quantity: 2}}},
		"eleven in all":         {f.seats[:2], []General{{SectionID: f.lawn, Quantity: 9}}},
		"a place as a seat":     {[]string{place}, []General{{SectionID: f.lawn, Quantity: 1}}},
		"a place alone":         {[]string{place}, nil},
	} {
		p, err := f.holds.Plan(ctx, f.buyer, f.eventID, tt.seats, tt.general...)
		if err == nil {
			_, err = f.holds.Place(ctx, p)
		}
		if !errors.Is(err, errkind.Invalid) {
			t.Errorf("%s: %v, want errkind.Invalid", name, err)
		}
	}
	var holds int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM holds`).Scan(&holds); err != nil || holds != 0 || f.free(t) != 20 {
		t.Errorf("refused requests left %d holds and %d of 20 places free (%v)", holds, f.free(t), err)
	}
}

// TestSoldOutSaysHowManyPlacesAreLeft: with 1 place of Lawn left, a hold of 2
// is refused as sold out, saying 1 is left; a hold of 1 takes it; the next is
// told none is left. A refused hold with a seat holds neither.
func TestSoldOutSaysHowManyPlacesAreLeft(t *testing.T) {
	t.Parallel()
	f := newPlacesFixture(t, nil, 5, 10)
	if _, err := f.placeFor(f.newBuyer(t), 4); err != nil {
		t.Fatal(err)
	}
	buyer := f.newBuyer(t)
	_, err := f.placeFor(buyer, 2, f.seats[0])
	var sold *SoldOutError
	if !errors.As(err, &sold) || !errors.Is(err, ErrSoldOut) || len(sold.Sections) != 1 ||
		sold.Sections[0] != (Short{SectionID: f.lawn, Section: "Lawn", Asked: 2, Available: 1}) {
		t.Fatalf("a hold of 2 with 1 left = %v, want sold out with 1 left", err)
	}
	if h, err := f.place(f.seats[0]); err != nil || h.TotalCents != 100 {
		t.Errorf("the seat of the refused hold was kept: %v", err)
	}
	if _, err := f.placeFor(buyer, 1); err != nil {
		t.Fatalf("a hold of the last place = %v", err)
	}
	_, err = f.placeFor(f.newBuyer(t), 1)
	if !errors.As(err, &sold) || sold.Sections[0].Available != 0 || sold.Error() != "Lawn is sold out; nothing was held" {
		t.Errorf("a hold with none left = %v, want Lawn sold out", err)
	}
}

// TestTheCapCountsPlaces: STAGEDOOR_MAX_HELD_SEATS counts places as seats.
func TestTheCapCountsPlaces(t *testing.T) {
	t.Parallel()
	f := newPlacesFixture(t, nil, 10, 3)
	if _, err := f.placeFor(f.buyer, 2); err != nil {
		t.Fatal(err)
	}
	_, err := f.placeFor(f.buyer, 1, f.seats[0])
	var tooMany *TooManyHeldError
	if !errors.As(err, &tooMany) || tooMany.Held != 2 || tooMany.Asked != 2 || tooMany.Max != 3 {
		t.Errorf("a hold past the cap = %v, want too many held (2 held, 2 asked, at most 3)", err)
	}
	if _, err := f.placeFor(f.buyer, 1); err != nil {
		t.Errorf("a hold up to the cap = %v", err)
	}
}

// TestPlacesLockedByARollbackAreNotSoldOut: while another transaction holds
// the row locks of every free place (as racing placements do), a placement
// finds none it can take without waiting; it then waits for them and judges
// them as that transaction leaves them: rolled back, they are free and it
// takes them (never a false sold out); taken, it is sold out.
func TestPlacesLockedByARollbackAreNotSoldOut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		commit bool // the locking transaction takes the places
	}{{"rolled back", false}, {"taken", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newPlacesFixture(t, nil, 4, 10)
			h, err := behindALock(t, f.db, `UPDATE seats SET held_until = now() + interval '1 hour'
				WHERE event_id = $1 AND row_label = ''`, []any{f.eventID}, tt.commit,
				func() (Hold, error) { return f.placeFor(f.buyer, 2) })
			var sold *SoldOutError
			switch {
			case !tt.commit && (err != nil || len(h.SeatIDs) != 2):
				t.Errorf("placement = %+v, %v; want 2 places held", h, err)
			case tt.commit && (!errors.As(err, &sold) || sold.Sections[0].Available != 0):
				t.Errorf("placement = %v; want sold out, none left", err)
			}
		})
	}
}

// TestAnExpiredHoldsPlacesAreFree: places whose hold expired are taken at
// once, whether the sweeper marked the hold or not.
func TestAnExpiredHoldsPlacesAreFree(t *testing.T) {
	t.Parallel()
	f := newPlacesFixture(t, nil, 2, 10)
	ctx := context.Background()
	h, err := f.placeFor(f.buyer, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1`, h.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec(ctx, `UPDATE seats SET held_until = now() - interval '1 second' WHERE hold_id = $1`, h.ID); err != nil {
		t.Fatal(err)
	}
	if again, err := f.placeFor(f.newBuyer(t), 2); err != nil || len(again.SeatIDs) != 2 {
		t.Errorf("the expired hold's places = %+v, %v; want them taken", again, err)
	}
	if got, err := f.holds.Get(ctx, f.buyer, h.ID); err != nil || got.Status != Expired {
		t.Errorf("the expired hold reads %s (%v)", got.Status, err)
	}
}
