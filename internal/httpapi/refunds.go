package httpapi

import (
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/checkout"
)

// refundRequest is the optional body of a refund: the tickets to refund
// (none: every ticket of the order that can be).
type refundRequest struct {
	TicketIDs []string `json:"ticket_ids"`
}

// refundOrder serves POST /v1/orders/{id}/refund (the order's buyer, within
// the event's refund window).
func (s *Server) refundOrder(c echo.Context) error { return s.refund(c, false) }

// organizerRefundOrder serves POST /v1/organizer/orders/{id}/refund (the
// order's event's organizer, at any time).
func (s *Server) organizerRefundOrder(c echo.Context) error { return s.refund(c, true) }

// refund asks checkout for the refund and answers: 200 with the order once
// the refund succeeded, 202 with it while Payrail's answer is unknown (its
// tickets refund_pending; the refund pass settles it), or a problem;
// Idempotent-Replayed when it is the key's refund.
func (s *Server) refund(c echo.Context, organizer bool) error {
	var in refundRequest
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return jsonProblem(err)
	}
	if strings.TrimSpace(string(body)) != "" {
		if err := decodeJSONBytes(body, &in); err != nil {
			return err
		}
	}
	res, err := s.checkout.Refund(c.Request().Context(), checkout.RefundRequest{
		AccountID: principalOf(c).AccountID, Organizer: organizer, OrderID: c.Param("id"),
		TicketIDs: in.TicketIDs, IdempotencyKey: c.Request().Header.Get("Idempotency-Key"),
	})
	if res.Replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Refund.Status == checkout.RefundPending {
		status = http.StatusAccepted
		if !organizer {
			c.Response().Header().Set(echo.HeaderLocation, "/v1/orders/"+res.Order.ID)
		}
	}
	out := orderOut(res.Order)
	if organizer {
		out.Tickets = withoutCodes(out.Tickets)
	}
	return c.JSON(status, out)
}

// withoutCodes is the tickets without their door codes: a code admits, and
// the organizer, who refunds and lists tickets, never needs one (the box
// office names tickets by id too).
func withoutCodes(ts []ticketJSON) []ticketJSON {
	for i := range ts {
		ts[i].Code = ""
	}
	return ts
}
