package boxoffice

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

func TestNeutraliseMakesFormulasText(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+1 Lounge": "'+1 Lounge", "-2": "'-2", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", "\nx": "'\nx",
		"Floor": "Floor", "": "", "a=b": "a=b", "'=x": "'=x", "ÉTAGE": "ÉTAGE",
	} {
		if got := Neutralise(in); got != want {
			t.Errorf("Neutralise(%q) = %q, want %q", in, got, want)
		}
	}
}

// list writes the organizer's attendee list and reads it back as CSV
// records; opened counts the calls of open.
func (v *venue) list(t *testing.T, organizerID string) (records [][]string, opened int, err error) {
	t.Helper()
	var out bytes.Buffer
	err = v.office.AttendeesCSV(context.Background(), organizerID, v.event, func() io.Writer {
		opened++
		return &out
	})
	if err != nil {
		return nil, opened, err
	}
	records, rerr := csv.NewReader(&out).ReadAll()
	if rerr != nil {
		t.Fatalf("the list is not CSV: %v\n%s", rerr, out.String())
	}
	return records, opened, nil
}

// TestTheAttendeeListIsTheTicketsThatAdmit: of a scanned ticket, one revoked,
// one transferred and a valid one, the list has the scanned one (its holder
// came in), the valid one and the transfer's new ticket under its receiver's
// email, in seat order, after the header. Cells a spreadsheet would run (an
// email and a section name beginning with =) begin with a quote. Another
// organizer gets errkind.NotFound and nothing written; an empty list is its
// header.
func TestTheAttendeeListIsTheTicketsThatAdmit(t *testing.T) {
	t.Parallel()
	v := newVenue(t)
	ctx := context.Background()
	if records, opened, err := v.list(t, v.organizer); err != nil || opened != 1 || len(records) != 1 || !slices.Equal(records[0], AttendeesHeader) {
		t.Errorf("an empty list = %q (opened %d), %v; want its header", records, opened, err)
	}
	ada := v.account(t, auth.Buyer, "ada-"+ids.New()+"@example.com")
	formula := v.account(t, auth.Buyer, "=cmd-"+ids.New()+"@example.com")
	eve := v.account(t, auth.Buyer, "eve-"+ids.New()+"@example.com")
	adas := v.buy(t, ada.ID, "tok_visa", v.seats[0], v.seats[1], v.seats[2], v.seats[3])
	theirs := v.buy(t, formula.ID, "tok_visa", v.seats[4])
	bySeat := map[string]scan.Ticket{}
	for _, tk := range adas.Tickets {
		bySeat[tk.SeatID] = tk.Ticket
	}
	key, err := v.accounts.CreateScannerKey(ctx, v.organizer, "Gate", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.scans.Scan(ctx, scan.Scanner{KeyID: key.ID, OrganizerID: v.organizer}, bySeat[v.seats[0]].Code); err != nil {
		t.Fatal(err)
	}
	if err := v.scans.Revoke(ctx, v.organizer, bySeat[v.seats[1]].ID); err != nil {
		t.Fatal(err)
	}
	moved, err := v.scans.Transfer(ctx, scan.Transfer{HolderID: ada.ID, TicketID: bySeat[v.seats[2]].ID, Email: eve.Email})
	if err != nil {
		t.Fatal(err)
	}

	records, opened, err := v.list(t, v.organizer)
	if err != nil || opened != 1 {
		t.Fatalf("the list: opened %d, %v", opened, err)
	}
	want := [][]string{
		AttendeesHeader,
		{bySeat[v.seats[0]].ID, adas.ID, ada.Email, "Floor", "A", "1", "scanned", "?"},
		{moved.New.ID, adas.ID, eve.Email, "Floor", "A", "3", "valid", ""},
		{bySeat[v.seats[3]].ID, adas.ID, ada.Email, "Floor", "A", "4", "valid", ""},
		{theirs.Tickets[0].ID, theirs.ID, "'" + formula.Email, `'=HYPERLINK("http://x")`, "A", "1", "valid", ""},
	}
	if len(records) != len(want) {
		t.Fatalf("the list = %q, want %d records", records, len(want))
	}
	for i, w := range want {
		got := records[i]
		if i == 1 && len(got) == len(w) && got[7] != "" { // the scan's time, as the database has it
			w[7] = got[7]
		}
		if !slices.Equal(got, w) {
			t.Errorf("record %d = %q, want %q", i, got, w)
		}
	}

	stranger := v.account(t, auth.Organizer, "org-"+ids.New()+"@example.com")
	if _, opened, err := v.list(t, stranger.ID); !errors.Is(err, errkind.NotFound) || opened != 0 {
		t.Errorf("another organizer's list: opened %d, %v; want errkind.NotFound before anything is written", opened, err)
	}
}

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

var errGone = errors.New("the client went away")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errGone
	}
	w.n -= len(p)
	return len(p), nil
}

// TestAListWhoseClientGoesAwayStops: a write that fails once the list is
// open (the client went away) is the list's error, which the caller turns
// into a cut connection rather than an answer that looks whole.
func TestAListWhoseClientGoesAwayStops(t *testing.T) {
	t.Parallel()
	v := newVenue(t)
	ada := v.account(t, auth.Buyer, "ada-"+ids.New()+"@example.com")
	for i := 0; i < len(v.seats); i += 4 {
		v.buy(t, ada.ID, "tok_visa", v.seats[i:i+4]...)
	}
	opened := 0
	err := v.office.AttendeesCSV(context.Background(), v.organizer, v.event, func() io.Writer {
		opened++
		return &failingWriter{n: 100}
	})
	if !errors.Is(err, errGone) || opened != 1 {
		t.Errorf("a list whose writer fails: opened %d, %v; want the writer's error", opened, err)
	}
}
