package httpapi

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"net/http"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// qrPixels is about the side of a ticket's QR image: large enough for a
// phone's camera at the door from a printed page, small enough to download at
// once. Each module is a whole number of pixels, so the side is a little less.
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
		img, err := qrPNG(t.Code)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "private, max-age=3600")
		return c.Blob(http.StatusOK, "image/png", img)
	}
	return errkind.NotFoundf("no such ticket")
}

// quietModules is the white border a QR code needs around it to be read
// reliably (ISO/IEC 18004: four modules).
const quietModules = 4

// qrPNG draws text as a QR code of about qrPixels a side, its quiet zone
// included.
func qrPNG(text string) ([]byte, error) {
	code, err := qr.Encode(text, qr.M, qr.AlphaNumeric)
	if err != nil {
		return nil, err
	}
	modules := code.Bounds().Dx()
	scale := max(1, qrPixels/(modules+2*quietModules))
	scaled, err := barcode.Scale(code, modules*scale, modules*scale)
	if err != nil {
		return nil, err
	}
	side := (modules + 2*quietModules) * scale
	canvas := image.NewGray(image.Rect(0, 0, side, side))
	draw.Draw(canvas, canvas.Bounds(), image.White, image.Point{}, draw.Src)
	offset := image.Pt(quietModules*scale, quietModules*scale)
	draw.Draw(canvas, scaled.Bounds().Add(offset), scaled, image.Point{}, draw.Src)
	var out bytes.Buffer
	if err := png.Encode(&out, canvas); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
