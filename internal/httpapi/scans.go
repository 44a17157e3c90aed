package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/scan"
)

type scanRequest struct {
	Code string `json:"code"`
}

// scannedSeatJSON is where an admitted ticket sits: a seat, or a place of
// general admission (row "", its number the place's, which no buyer is shown).
type scannedSeatJSON struct {
	Section          string `json:"section"`
	Row              string `json:"row"`
	Number           int    `json:"number"`
	GeneralAdmission bool   `json:"general_admission"`
}

// seatJSONOf is a ticket's seat as the API shows it.
func seatJSONOf(s scan.Seat) scannedSeatJSON {
	return scannedSeatJSON{Section: s.Section, Row: s.Row, Number: s.Number, GeneralAdmission: s.Row == ""}
}

// scan serves POST /v1/scans (X-Api-Key). Its route rings have authenticated
// the key and passed scanner-key; a refusal (already_scanned, invalid,
// wrong_event) is a scan-rejected problem from the error table, recorded like
// an admission.
func (s *Server) scan(c echo.Context) error {
	var in scanRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	p := principalOf(c)
	a, err := s.scans.Scan(c.Request().Context(),
		scan.Scanner{KeyID: p.ScannerKeyID, OrganizerID: p.AccountID, EventID: p.EventID}, in.Code)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Result    scan.Result     `json:"result"`
		TicketID  string          `json:"ticket_id"`
		EventID   string          `json:"event_id"`
		Reference string          `json:"reference"`
		Seat      scannedSeatJSON `json:"seat"`
		ScannedAt time.Time       `json:"scanned_at"`
	}{scan.Admitted, a.TicketID, a.EventID, a.Reference, seatJSONOf(a.Seat), a.ScannedAt.UTC()})
}

type scanAttemptJSON struct {
	ID           string  `json:"id"`
	ScannerKeyID string  `json:"scanner_key_id"`
	ScannerLabel string  `json:"scanner_label"`
	TicketID     *string `json:"ticket_id"` // null when the code was no ticket of this organizer
	CodePrefix   string  `json:"code_prefix"`
	// Reference and Seat are the ticket's; null with ticket_id.
	Reference *string          `json:"reference"`
	Seat      *scannedSeatJSON `json:"seat"`
	Result    scan.Result      `json:"result"`
	ScannedAt time.Time        `json:"scanned_at"`
	Offline   bool             `json:"offline"` // made offline on the device, uploaded later
	// AfterKeyRevoked: uploaded after its key was revoked (dated before).
	AfterKeyRevoked bool `json:"uploaded_after_key_revoked"`
	// DeviceScannedAt: the device's date, when it was not believed.
	DeviceScannedAt *time.Time `json:"device_scanned_at"`
}

// listScans serves GET /v1/events/{id}/scans?limit=&before= (the event's
// organizer): the event's scan attempts, newest first. next_before, when not
// null, is the before of the next (older) page.
func (s *Server) listScans(c echo.Context) error {
	limit, err := pageLimit(c, scan.MaxPageSize)
	if err != nil {
		return err
	}
	eventID := c.Param("id")
	if id, ok := ids.Parse(eventID); ok {
		eventID = id
	}
	page, err := s.scans.Attempts(c.Request().Context(), principalOf(c).AccountID, eventID, limit, c.QueryParam("before"))
	if err != nil {
		return err
	}
	out := make([]scanAttemptJSON, 0, len(page.Attempts))
	for _, a := range page.Attempts {
		j := scanAttemptJSON{ID: a.ID, ScannerKeyID: a.ScannerKeyID, ScannerLabel: a.ScannerLabel,
			CodePrefix: a.CodePrefix, Result: a.Result, ScannedAt: a.ScannedAt.UTC(), Offline: a.Offline,
			AfterKeyRevoked: a.AfterKeyRevoked, DeviceScannedAt: utc(a.DeviceScannedAt)}
		if a.TicketID != "" {
			seat := seatJSONOf(a.Seat)
			j.TicketID, j.Reference, j.Seat = &a.TicketID, &a.Reference, &seat
		}
		out = append(out, j)
	}
	var next *string
	if page.NextBefore != "" {
		next = &page.NextBefore
	}
	return c.JSON(http.StatusOK, map[string]any{"event_id": eventID, "scans": out, "next_before": next})
}

// scanRejectionMembers are the members of a scan-rejected problem: result
// always; for the organizer's own ticket, its id and event; for a ticket
// already admitted, first_scanned_at.
func scanRejectionMembers(r *scan.Rejection) map[string]any {
	m := map[string]any{"result": r.Result}
	if r.TicketID != "" {
		m["ticket_id"], m["event_id"] = r.TicketID, r.EventID
	}
	if r.Result == scan.AlreadyScanned {
		m["first_scanned_at"] = r.FirstScannedAt.UTC()
	}
	return m
}
