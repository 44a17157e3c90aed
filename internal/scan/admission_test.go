package scan

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// TestOneAdmissionPerTicketUnderARace: many devices scan one ticket at the
// same moment, through keys bound and unbound: exactly one is admitted, every
// other hears already_scanned with that admission's time, and the audit has
// one admitted row of the ticket and a row for every attempt.
func TestOneAdmissionPerTicketUnderARace(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	scanners := []Scanner{d.scanner(t, d.events[0]), d.scanner(t, "")}
	const devices = 24
	admitted, rejected := d.scanAtOnce(t, scanners, devices, func(int) string { return d.codes[0][0] })
	if len(admitted) != 1 {
		t.Fatalf("%d admissions of one ticket, want 1", len(admitted))
	}
	a := admitted[0]
	if a.TicketID != d.tickets[0][0] || a.EventID != d.events[0] || a.Seat.Section != "Floor" || a.Seat.Row != "A" || a.Seat.Number != 1 {
		t.Errorf("admission %+v, want ticket %s of event %s at Floor A1", a, d.tickets[0][0], d.events[0])
	}
	for _, r := range rejected {
		if r.Result != AlreadyScanned || !r.FirstScannedAt.Equal(a.ScannedAt) || r.TicketID != a.TicketID {
			t.Errorf("rejection %+v, want already_scanned at %v", r, a.ScannedAt)
		}
	}
	if n := d.admittedRows(t, a.TicketID); n != 1 {
		t.Errorf("the audit has %d admitted rows of the ticket, want 1", n)
	}
	var rows int
	if err := d.db.QueryRow(context.Background(), `SELECT count(*) FROM scans WHERE ticket_id = $1`, a.TicketID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != devices {
		t.Errorf("the audit has %d rows of the ticket, want one an attempt (%d)", rows, devices)
	}
}

// TestAScanTellsWhyItAdmittedNothing: a bound key refuses another event's
// ticket as wrong_event (and admits it nowhere), an unbound key admits it; a
// code of no ticket is invalid, and another organizer's key finds nothing.
func TestAScanTellsWhyItAdmittedNothing(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	bound := d.scanner(t, d.events[0])
	var r *Rejection
	if _, err := d.scans.Scan(ctx, bound, d.codes[1][0]); !errors.As(err, &r) || r.Result != WrongEvent || r.EventID != d.events[1] {
		t.Fatalf("another event's ticket with a bound key: %v, want wrong_event naming its event", err)
	}
	if n := d.admittedRows(t, d.tickets[1][0]); n != 0 {
		t.Fatalf("a wrong_event scan admitted the ticket (%d rows)", n)
	}
	if _, err := d.scans.Scan(ctx, d.scanner(t, ""), d.codes[1][0]); err != nil {
		t.Fatalf("the same ticket with an unbound key: %v, want admitted", err)
	}
	if _, err := d.scans.Scan(ctx, bound, "NOSUCHCODE"); !errors.Is(err, ErrInvalid) {
		t.Errorf("an unknown code: %v, want ErrInvalid", err)
	}
	stranger := Scanner{KeyID: bound.KeyID, OrganizerID: d.buyer, EventID: ""}
	if _, err := d.scans.Scan(ctx, stranger, d.codes[0][1]); !errors.Is(err, ErrInvalid) {
		t.Errorf("another organizer's scan of the ticket: %v, want ErrInvalid (its existence not revealed)", err)
	}
	if _, err := d.scans.Scan(ctx, bound, "  "); !errors.Is(err, errkind.Invalid) {
		t.Errorf("a blank code: %v, want errkind.Invalid", err)
	}
}

// TestARevokedTicketAdmitsNoOne: the organizer's revocation (once, however
// often asked) and a refund's (RefundOrder, in the caller's transaction) both
// make a ticket admit no one, list it once among the revocations a door
// syncs, and show on the buyer's list (TicketsOf).
func TestARevokedTicketAdmitsNoOne(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	sc := d.scanner(t, "")
	for range 2 {
		if err := d.scans.Revoke(ctx, d.organizer, d.tickets[0][0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.scans.Revoke(ctx, d.buyer, d.tickets[0][1]); !errors.Is(err, errkind.NotFound) {
		t.Errorf("a revocation by another than the organizer: %v, want errkind.NotFound", err)
	}
	n, err := refundOrderIn(t, d, d.orders[1])
	if err != nil || n != 4 {
		t.Fatalf("RefundOrder = %d, %v; want the order's 4 tickets", n, err)
	}
	for _, code := range []string{d.codes[0][0], d.codes[1][2]} {
		if _, err := d.scans.Scan(ctx, sc, code); !errors.Is(err, ErrRevoked) {
			t.Errorf("a revoked ticket's scan: %v, want ErrRevoked", err)
		}
	}
	if _, err := d.scans.Scan(ctx, sc, d.codes[0][1]); err != nil {
		t.Errorf("a ticket not revoked: %v, want admitted", err)
	}
	list, err := d.scans.Revocations(ctx, sc, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 5 || list[0].TicketID != d.tickets[0][0] {
		t.Errorf("revocations %+v, want 5, the organizer's first", list)
	}
	if after, _ := d.scans.Revocations(ctx, sc, list[0].ID, 100); len(after) != 4 {
		t.Errorf("revocations after the first: %d, want 4", len(after))
	}
	if bound, _ := d.scans.Revocations(ctx, d.scanner(t, d.events[0]), 0, 100); len(bound) != 1 {
		t.Errorf("a key bound to the first event sees %d revocations, want 1 (its event's)", len(bound))
	}
	tickets, err := TicketsOf(ctx, d.db, d.buyer, "")
	if err != nil {
		t.Fatal(err)
	}
	revoked := 0
	for _, tk := range tickets {
		if tk.Revoked {
			revoked++
		}
	}
	if len(tickets) != 8 || revoked != 5 {
		t.Errorf("the buyer's list: %d tickets, %d revoked; want 8, 5", len(tickets), revoked)
	}
	if again, _ := refundOrderIn(t, d, d.orders[1]); again != 0 {
		t.Errorf("refunding the order again refunded %d, want 0", again)
	}
}

// refundOrderIn runs RefundOrder in a transaction of its own and returns how
// many tickets it refunded.
func refundOrderIn(t *testing.T, d *door, orderID string) (int, error) {
	t.Helper()
	var held []Held
	err := pgx.BeginFunc(context.Background(), d.db, func(tx pgx.Tx) (err error) {
		held, err = RefundOrder(context.Background(), tx, orderID)
		return err
	})
	return len(held), err
}

// TestAnUploadSettlesTheEarliestAdmission: an admission a device made offline
// before the recorded one takes its place (that one becomes a conflict); one
// made after is a conflict; a scan the device only queued is already_scanned;
// a retried upload answers as stored; a revoked key's scans dated after its
// revocation are refused, those before heard.
func TestAnUploadSettlesTheEarliestAdmission(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	sc := d.scanner(t, d.events[0])
	// The key was made a minute ago: an upload dated a millisecond before
	// the online admission is within its life however fast the test runs.
	if _, err := d.db.Exec(ctx, `UPDATE scanner_keys SET created_at = created_at - interval '1 minute' WHERE id = $1`, sc.KeyID); err != nil {
		t.Fatal(err)
	}
	made := time.Now().Add(-time.Minute)
	online, err := d.scans.Scan(ctx, sc, d.codes[0][0])
	if err != nil {
		t.Fatal(err)
	}
	before := online.ScannedAt.Add(-time.Millisecond)
	if before.Before(made.Add(-time.Second)) {
		t.Fatalf("the online admission at %v is before the key was made", online.ScannedAt)
	}
	scans := []DeviceScan{
		{DeviceScanID: "d1", Code: d.codes[0][0], ScannedAt: before, Offline: true},                           // earlier: takes its place
		{DeviceScanID: "d2", Code: d.codes[0][1], ScannedAt: before, Offline: true},                           // never scanned: admitted
		{DeviceScanID: "d3", Code: d.codes[0][1], ScannedAt: before.Add(time.Millisecond)},                    // queued, after: already scanned
		{DeviceScanID: "d4", Code: d.codes[0][1], ScannedAt: before.Add(2 * time.Millisecond), Offline: true}, // offline, after: conflict
		{DeviceScanID: "d5", Code: d.codes[1][0], ScannedAt: before, Offline: true},                           // another event's
	}
	want := map[string]Result{"d1": Admitted, "d2": Admitted, "d3": AlreadyScanned, "d4": Conflict, "d5": WrongEvent}
	settled, err := d.scans.Upload(ctx, sc, scans, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != len(scans) {
		t.Fatalf("%d settled, want %d", len(settled), len(scans))
	}
	for i, s := range settled {
		if s.DeviceScanID != scans[i].DeviceScanID || s.Result != want[s.DeviceScanID] || s.Replayed {
			t.Errorf("settled %+v, want %s for %s", s, want[scans[i].DeviceScanID], scans[i].DeviceScanID)
		}
	}
	var online0 string
	if err := d.db.QueryRow(ctx, `SELECT result FROM scans WHERE ticket_id = $1 AND device_scan_id IS NULL`, d.tickets[0][0]).Scan(&online0); err != nil {
		t.Fatal(err)
	}
	if online0 != string(Conflict) {
		t.Errorf("the displaced online admission is %q, want conflict", online0)
	}
	for _, ticket := range d.tickets[0][:2] {
		if n := d.admittedRows(t, ticket); n != 1 {
			t.Errorf("ticket %s has %d admitted rows, want 1", ticket, n)
		}
	}

	again, err := d.scans.Upload(ctx, sc, scans[:2], nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range again {
		if !s.Replayed || s.Result != Admitted {
			t.Errorf("a retried upload: %+v, want its stored answer, replayed", s)
		}
	}

	revokedAt := time.Now()
	revoked := sc
	revoked.KeyRevokedAt = &revokedAt
	late, err := d.scans.Upload(ctx, revoked, []DeviceScan{
		{DeviceScanID: "r1", Code: d.codes[0][2], ScannedAt: revokedAt.Add(-time.Millisecond), Offline: true},
		{DeviceScanID: "r2", Code: d.codes[0][3], ScannedAt: revokedAt.Add(time.Hour), Offline: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if late[0].Result != Admitted || late[1].Result != KeyRevoked {
		t.Errorf("a revoked key's upload: %+v, want the scan before its revocation admitted, the one after refused", late)
	}
	if n := d.admittedRows(t, d.tickets[0][3]); n != 0 {
		t.Errorf("a refused scan of a revoked key was recorded as an admission")
	}
}
