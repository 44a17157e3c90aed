// Package ticketqr draws a ticket's door code as a QR code, the one drawing
// that the tickets page (GET /v1/tickets/{id}/qr) and the tickets' e-mail
// (internal/mail) show, so that a door's scanner reads both alike.
//
// It owns no table and knows no HTTP: callers cache or embed the PNG.
package ticketqr

import (
	"bytes"
	"image"
	"image/color"
	"image/png"

	"github.com/boombuler/barcode/qr"
)

// Pixels is about the side of a ticket's QR image: large enough for a
// phone's camera at the door from a printed page, small enough to download at
// once. Each module is a whole number of pixels, so the side is a little less.
const Pixels = 320

// Drawing names how PNG draws; change it with the drawing, so that every
// browser's copy of an image (its ETag) is replaced.
const Drawing = "qr-m-320-v1:"

// quietModules is the white border a QR code needs around it to be read
// reliably (ISO/IEC 18004: four modules).
const quietModules = 4

// PNG draws code as a QR code of about Pixels a side, its quiet zone
// included: error correction M, alphanumeric (ticket codes are base32). Each
// module is a square of whole pixels, written straight into the image.
func PNG(code string) ([]byte, error) {
	symbol, err := qr.Encode(code, qr.M, qr.AlphaNumeric)
	if err != nil {
		return nil, err
	}
	modules := symbol.Bounds().Dx()
	scale := max(1, Pixels/(modules+2*quietModules))
	side := (modules + 2*quietModules) * scale
	canvas := image.NewGray(image.Rect(0, 0, side, side))
	for i := range canvas.Pix {
		canvas.Pix[i] = 0xff
	}
	for my := range modules {
		for mx := range modules {
			if c := color.GrayModel.Convert(symbol.At(mx, my)).(color.Gray); c.Y >= 0x80 {
				continue
			}
			x0, y0 := (quietModules+mx)*scale, (quietModules+my)*scale
			for y := y0; y < y0+scale; y++ {
				row := canvas.Pix[y*canvas.Stride+x0 : y*canvas.Stride+x0+scale]
				for i := range row {
					row[i] = 0
				}
			}
		}
	}
	var out bytes.Buffer
	if err := png.Encode(&out, canvas); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
