package scan

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// newBuyer signs a buyer up and returns the account.
func (d *door) newBuyer(t *testing.T) auth.Account {
	t.Helper()
	a, err := d.accounts.Register(context.Background(), auth.Buyer, "friend-"+ids.New()+"@example.com", "correct horse", "Friend")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ticketOf returns the buyer's ticket with this id, failing the test when
// the buyer lists none.
func (d *door) ticketOf(t *testing.T, buyerID, ticketID string) Ticket {
	t.Helper()
	list, err := TicketsOf(context.Background(), d.db, buyerID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range list {
		if tk.ID == ticketID {
			return tk
		}
	}
	t.Fatalf("buyer %s lists no ticket %s (lists %+v)", buyerID, ticketID, list)
	return Ticket{}
}

// twoLiveTickets lists the seats that have more than one live ticket.
func (d *door) twoLiveTickets(t *testing.T) []string {
	t.Helper()
	rows, err := d.db.Query(context.Background(), `
		SELECT seat_id::text FROM tickets WHERE revoked_at IS NULL GROUP BY seat_id HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	seats, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return seats
}

// TestATransferMovesTheTicketWithANewSignedCode: the giver's ticket reads
// transferred and revoked; the receiver (named by her email in another case)
// holds a new ticket of the same seat, order and event, with a new id and a
// code signed by the event's key that names the new ticket. At the door the
// old code is revoked and on the revocations list; the new one admits once.
// The transfer's notices, to both, are in the outbox.
func TestATransferMovesTheTicketWithANewSignedCode(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	keys := ticketsign.NewKeys(d.db)
	scans := NewService(d.db, keys)
	friend := d.newBuyer(t)
	old := d.tickets[0][1]

	got, err := scans.Transfer(ctx, Transfer{HolderID: d.buyer, TicketID: old, Email: "  " + upper(friend.Email) + " "})
	if err != nil {
		t.Fatal(err)
	}
	if got.ReceiverID != friend.ID || got.ReceiverEmail != friend.Email || got.GiverID != d.buyer || got.At.IsZero() ||
		got.Old.ID != old || !got.Old.Transferred || got.Old.Code != "" {
		t.Errorf("the transfer = %+v", got)
	}
	gave := d.ticketOf(t, d.buyer, old)
	if !gave.Transferred || !gave.Revoked || gave.ScannedAt != nil {
		t.Errorf("the giver's ticket after the transfer = %+v, want transferred and revoked", gave)
	}
	got2 := d.ticketOf(t, friend.ID, got.New.ID)
	if got2.ID == old || got2.SeatID != gave.SeatID || got2.OrderID != gave.OrderID || got2.EventID != gave.EventID ||
		got2.Revoked || got2.Transferred || got2.Code != got.New.Code || got2.Code == d.codes[0][1] {
		t.Errorf("the receiver's ticket = %+v, want a new live one of seat %s, order %s", got2, gave.SeatID, gave.OrderID)
	}
	pub, ok, err := keys.PublicOf(ctx, d.events[0])
	if err != nil || !ok {
		t.Fatalf("the event's public key: %v %v", ok, err)
	}
	if claims, err := ticketsign.Verify(pub, got2.Code); err != nil || claims.TicketID != got2.ID || claims.EventID != d.events[0] {
		t.Errorf("the new code verifies as %+v, %v; want the new ticket of the event", claims, err)
	}

	sc := d.scanner(t, d.events[0])
	var r *Rejection
	if _, err := scans.Scan(ctx, sc, d.codes[0][1]); !errors.As(err, &r) || r.Result != Revoked || r.TicketID != old {
		t.Errorf("a scan of the old code = %v, want revoked", err)
	}
	list, err := scans.Revocations(ctx, sc, 0, 100)
	if err != nil || len(list) != 1 || list[0].TicketID != old || list[0].EventID != d.events[0] {
		t.Errorf("the revocations = %+v, %v; want the old ticket", list, err)
	}
	if a, err := scans.Scan(ctx, sc, got2.Code); err != nil || a.TicketID != got2.ID {
		t.Errorf("a scan of the new code = %+v, %v; want admitted", a, err)
	}
	if _, err := scans.Scan(ctx, sc, got2.Code); !errors.Is(err, ErrAlreadyScanned) {
		t.Errorf("a second scan of the new code = %v, want already scanned", err)
	}
	if seats := d.twoLiveTickets(t); len(seats) > 0 {
		t.Errorf("seats with two live tickets: %v", seats)
	}
	d.wantNotices(t, got, friend)
}

// wantNotices checks the outbox after the transfer: one message to its giver
// (ticket_given) and one to its receiver (ticket_received), the notice naming
// the new ticket with its new code, its seat and event, and both people.
func (d *door) wantNotices(t *testing.T, tr Transferred, receiver auth.Account) {
	t.Helper()
	ctx := context.Background()
	giver, err := auth.AccountByID(ctx, d.db, tr.GiverID)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ to, kind string }{{giver.Email, mail.KindTicketGiven}, {receiver.Email, mail.KindTicketReceived}} {
		got, err := mail.Outbox(ctx, d.db, w.to)
		if err != nil || len(got) != 1 || got[0].Kind != w.kind {
			t.Fatalf("the outbox to %s = %+v, %v; want one %s", w.to, got, err, w.kind)
		}
		var n mail.TicketTransferred
		if err := json.Unmarshal(got[0].Notice, &n); err != nil {
			t.Fatal(err)
		}
		if n.From.Email != giver.Email || n.From.Name != giver.Name || n.To.Email != receiver.Email ||
			n.Ticket.ID != tr.New.ID || n.Ticket.Code != tr.New.Code || n.Ticket.Section != "Floor" || n.Ticket.Row != "A" ||
			n.Ticket.Number < 1 || n.Event.ID != tr.New.EventID || n.Event.Name != "Night" || n.Event.Venue != "Hall" {
			t.Errorf("the notice to %s = %+v", w.to, n)
		}
	}
}

// upper is s in capitals (ASCII), as a friend might type an email.
func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestTransfersThatCannotBeMadeChangeNothing: each refusal is the error its
// caller maps, and no ticket, revocation, transfer or notice is written.
func TestTransfersThatCannotBeMadeChangeNothing(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	friend, stranger := d.newBuyer(t), d.newBuyer(t)
	sc := d.scanner(t, "")
	if _, err := d.scans.Scan(ctx, sc, d.codes[1][0]); err != nil {
		t.Fatal(err)
	}
	if err := d.scans.Revoke(ctx, d.organizer, d.tickets[1][1]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.scans.Transfer(ctx, Transfer{HolderID: d.buyer, TicketID: d.tickets[1][2], Email: friend.Email}); err != nil {
		t.Fatal(err)
	}
	organizerEmail := "org-" + ids.New() + "@example.com"
	if _, err := d.accounts.Register(ctx, auth.Organizer, organizerEmail, "correct horse", "Org"); err != nil {
		t.Fatal(err)
	}
	var buyerEmail string
	if err := d.db.QueryRow(ctx, `SELECT email FROM accounts WHERE id = $1`, d.buyer).Scan(&buyerEmail); err != nil {
		t.Fatal(err)
	}
	valid := d.tickets[0][0]
	for _, c := range []struct {
		name   string
		t      Transfer
		want   error
		reason string
	}{
		{"another buyer's ticket", Transfer{HolderID: stranger.ID, TicketID: valid, Email: friend.Email}, errkind.NotFound, ""},
		{"an unknown ticket", Transfer{HolderID: d.buyer, TicketID: ids.New(), Email: friend.Email}, errkind.NotFound, ""},
		{"a ticket id that is no id", Transfer{HolderID: d.buyer, TicketID: "42", Email: friend.Email}, errkind.NotFound, ""},
		{"a malformed email", Transfer{HolderID: d.buyer, TicketID: valid, Email: "friend at example"}, errkind.Invalid, ""},
		{"no email", Transfer{HolderID: d.buyer, TicketID: valid}, errkind.Invalid, ""},
		{"an email of no account", Transfer{HolderID: d.buyer, TicketID: valid, Email: "nobody-" + ids.New() + "@example.com"}, auth.ErrNoSuchBuyer, ""},
		{"an organizer's email", Transfer{HolderID: d.buyer, TicketID: valid, Email: organizerEmail}, auth.ErrNoSuchBuyer, ""},
		{"the holder's own email", Transfer{HolderID: d.buyer, TicketID: valid, Email: upper(buyerEmail)}, errkind.Invalid, ""},
		{"a scanned ticket", Transfer{HolderID: d.buyer, TicketID: d.tickets[1][0], Email: friend.Email}, ErrNotTransferable, ReasonScanned},
		{"a revoked ticket", Transfer{HolderID: d.buyer, TicketID: d.tickets[1][1], Email: friend.Email}, ErrNotTransferable, ReasonRevoked},
		{"a ticket given away", Transfer{HolderID: d.buyer, TicketID: d.tickets[1][2], Email: stranger.Email}, ErrNotTransferable, ReasonTransferred},
	} {
		before := d.counts(t)
		_, err := d.scans.Transfer(ctx, c.t)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		var refused *NotTransferableError
		if c.reason != "" && (!errors.As(err, &refused) || refused.Reason != c.reason) {
			t.Errorf("%s: %v, want the reason %s", c.name, err, c.reason)
		}
		if after := d.counts(t); after != before {
			t.Errorf("%s changed the tickets: %v, then %v", c.name, before, after)
		}
	}
	if tk := d.ticketOf(t, d.buyer, valid); tk.Revoked || tk.Transferred {
		t.Errorf("the valid ticket after the refusals = %+v", tk)
	}
}

// counts is how many tickets, revoked tickets, revocations and messages in
// the outbox there are.
func (d *door) counts(t *testing.T) [4]int {
	t.Helper()
	var n [4]int
	if err := d.db.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM tickets), (SELECT count(*) FROM tickets WHERE revoked_at IS NOT NULL),
		       (SELECT count(*) FROM ticket_revocations), (SELECT count(*) FROM mail_outbox)`).Scan(&n[0], &n[1], &n[2], &n[3]); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTransfersAndAScanOfOneTicketAtOnceOneWins: for each of four tickets,
// sixteen transfers to four buyers and one scan are released together, on a
// pool of twenty connections. Exactly one of the seventeen succeeds; every
// other transfer is refused as not transferable (scanned or transferred), a
// losing scan as revoked. No seat ever has two live tickets, and a ticket
// given away has exactly one successor.
func TestTransfersAndAScanOfOneTicketAtOnceOneWins(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	cfg := d.db.Config().Copy()
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	scans := NewService(pool, nil)
	friends := []auth.Account{d.newBuyer(t), d.newBuyer(t), d.newBuyer(t), d.newBuyer(t)}
	sc := d.scanner(t, "")
	const transfers = 16
	for i, ticketID := range d.tickets[0] {
		errs := make([]error, transfers+1)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range transfers + 1 {
			wg.Go(func() {
				<-start
				if g == transfers {
					_, errs[g] = scans.Scan(ctx, sc, d.codes[0][i])
					return
				}
				_, errs[g] = scans.Transfer(ctx, Transfer{HolderID: d.buyer, TicketID: ticketID, Email: friends[g%len(friends)].Email})
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for g, err := range errs {
			var rejected *Rejection
			switch {
			case err == nil:
				wins++
			case g == transfers && errors.As(err, &rejected) && rejected.Result == Revoked:
			case g < transfers && errors.Is(err, ErrNotTransferable):
			default:
				t.Errorf("ticket %d, racer %d: %v", i, g, err)
			}
		}
		if wins != 1 {
			t.Errorf("ticket %d: %d of the racers won, want exactly one: %v", i, wins, errs)
		}
	}
	if seats := d.twoLiveTickets(t); len(seats) > 0 {
		t.Errorf("seats with two live tickets: %v", seats)
	}
	var orphans int
	if err := d.db.QueryRow(ctx, `
		SELECT count(*) FROM tickets t
		WHERE t.transferred_at IS NOT NULL
		  AND (SELECT count(*) FROM tickets n WHERE n.transferred_from = t.id AND n.seat_id = t.seat_id AND n.order_id = t.order_id) <> 1`).
		Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d transferred tickets without exactly one successor (%v)", orphans, err)
	}
}

// TestATicketReceivedMovesOn: the receiver gives the ticket to a third buyer,
// who holds a third ticket of the seat; the first two admit no one.
func TestATicketReceivedMovesOn(t *testing.T) {
	t.Parallel()
	d := newDoor(t)
	ctx := context.Background()
	bea, cy := d.newBuyer(t), d.newBuyer(t)
	first, err := d.scans.Transfer(ctx, Transfer{HolderID: d.buyer, TicketID: d.tickets[0][3], Email: bea.Email})
	if err != nil {
		t.Fatal(err)
	}
	second, err := d.scans.Transfer(ctx, Transfer{HolderID: bea.ID, TicketID: first.New.ID, Email: cy.Email})
	if err != nil {
		t.Fatal(err)
	}
	if tk := d.ticketOf(t, bea.ID, first.New.ID); !tk.Transferred {
		t.Errorf("the middle ticket = %+v, want transferred", tk)
	}
	sc := d.scanner(t, "")
	for _, code := range []string{d.codes[0][3], first.New.Code} {
		if _, err := d.scans.Scan(ctx, sc, code); !errors.Is(err, ErrRevoked) {
			t.Errorf("a scan of a code given away = %v, want revoked", err)
		}
	}
	if a, err := d.scans.Scan(ctx, sc, second.New.Code); err != nil || a.TicketID != second.New.ID {
		t.Errorf("the third ticket's scan = %+v, %v; want admitted", a, err)
	}
}
