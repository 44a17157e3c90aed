package httpapi

import (
	"bytes"
	"image/png"
	"net/http"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// qrPixels is the side of a ticket's QR image: large enough for a phone's
// camera at the door from a printed page, small enough to download at once.
const qrPixels = 320

// ticketQR serves GET /v1/tickets/{id}/qr (its buyer): the ticket's code as a
// QR code, a PNG the door's scanner reads. Another buyer's ticket is 404.
func (s *Server) ticketQR(c echo.Context) error {
	id, ok := ids.Parse(c.Param("id"))
	if !ok {
		return errkind.NotFoundf("no such ticket")
	}
	tickets, err := s.Checkout.Tickets(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	for _, t := range tickets {
		if t.ID != id {
			continue
		}
		code, err := qr.Encode(t.Code, qr.M, qr.AlphaNumeric)
		if err != nil {
			return err
		}
		if code, err = barcode.Scale(code, qrPixels, qrPixels); err != nil {
			return err
		}
		var img bytes.Buffer
		if err := png.Encode(&img, code); err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "private, max-age=3600")
		return c.Blob(http.StatusOK, "image/png", img.Bytes())
	}
	return errkind.NotFoundf("no such ticket")
}
