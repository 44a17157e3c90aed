package boxoffice

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/scan"
)

// AttendeesHeader is the attendee list's first row: each attendee is a
// ticket that admits (valid, or scanned already: someone who came in is an
// attendee), with its holder's email, its seat (a place of general
// admission has neither row nor seat number), its id (the ticket's reference,
// which the organizer's revocation and the door's audit name; never its
// code, which admits), its order, and when it was scanned, if it was.
var AttendeesHeader = []string{"ticket_id", "order_id", "email", "section", "row", "seat", "status", "scanned_at"}

// AttendeesCSV writes the organizer's event's attendee list as CSV to the
// writer open returns: AttendeesHeader, then one row an attendee, in seat
// order, as the database sends them. open is called once, when the event is
// known to be the organizer's and the list's first row has arrived (or the
// list is found empty), so that a refusal or a failed query is an error
// before anything was written: errkind.NotFound for an event that is not the
// organizer's, or the database's. An error after open (the database or the
// client went away mid-list) is returned too; the caller can only cut the
// answer short.
func (s *Service) AttendeesCSV(ctx context.Context, organizerID, eventID string, open func() io.Writer) error {
	if err := s.organizers(ctx, organizerID, eventID); err != nil {
		return err
	}
	var w *csv.Writer
	start := func() error {
		w = csv.NewWriter(open())
		return w.Write(AttendeesHeader)
	}
	err := s.tickets.Attendees(ctx, eventID, func(a scan.Attendee) error {
		if w == nil {
			if err := start(); err != nil {
				return err
			}
		}
		return w.Write(attendeeRow(a))
	})
	if err != nil {
		return err
	}
	if w == nil {
		if err := start(); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// attendeeRow is the attendee's row of the list, each cell neutralised.
func attendeeRow(a scan.Attendee) []string {
	row, seat, status, scanned := a.Seat.Row, "", "valid", ""
	if row != "" {
		seat = strconv.Itoa(a.Seat.Number)
	}
	if a.ScannedAt != nil {
		status, scanned = "scanned", a.ScannedAt.UTC().Format(time.RFC3339)
	}
	cells := []string{a.TicketID, a.OrderID, a.HolderEmail, a.Seat.Section, row, seat, status, scanned}
	for i, c := range cells {
		cells[i] = Neutralise(c)
	}
	return cells
}

// formulaStarts are the first characters that make a spreadsheet read a cell
// as a formula or split it (OWASP, CSV injection): =, +, -, @, tab and
// carriage return; and line feed, which some readers trim first.
const formulaStarts = "=+-@\t\r\n"

// Neutralise makes a cell that a spreadsheet would run as a formula read as
// text: prefixed with a single quote, as OWASP's CSV injection guidance says
// (the quote shows in the cell; the text is there whole). encoding/csv quotes
// a cell holding a comma, a quote or a line break, and doubles its quotes.
// Emails and names may begin so ("=cmd@example.com" is an address, "+1
// Lounge" a section): every cell of the list passes here.
func Neutralise(cell string) string {
	if cell != "" && strings.ContainsRune(formulaStarts, rune(cell[0])) {
		return "'" + cell
	}
	return cell
}
