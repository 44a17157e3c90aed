package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/scan"
)

type transferRequest struct {
	Email string `json:"email"`
}

// transferTicket serves POST /v1/tickets/{id}/transfer (the ticket's holder;
// transfer-buyer has spent a token on the route's row, whatever the answer):
// 200 with the ticket as its giver holds it now, transferred and without its
// code. The receiver lists the new ticket. Refusals from the error table: 400
// (a malformed email, or the holder's own), 404 not-found (not the holder's
// ticket), 404 recipient-not-found (no buyer account has the email), 409
// ticket-not-transferable (+ ticket_status).
func (s *Server) transferTicket(c echo.Context) error {
	var in transferRequest
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	t, err := s.scans.Transfer(c.Request().Context(),
		scan.Transfer{HolderID: principalOf(c).AccountID, TicketID: c.Param("id"), Email: in.Email})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ticketJSONOf(checkout.Ticket{Ticket: t.Old}))
}
