package testenv

import (
	"bytes"
	"image"
	_ "image/png" // the images read are PNGs
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// DecodeQR reads the text of the QR code a PNG draws (a ticket's, as
// internal/ticketqr draws it); it fails t when there is none.
func DecodeQR(t testing.TB, png []byte) string {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatalf("testenv: the QR code is no PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	// The image is the server's PNG itself, not a photo: PURE_BARCODE reads it
	// as drawn. Without it, gozxing's finder misreads about 1 code in 100
	// (33 of 3,000 random ticket codes; zxing-cpp, the door's decoder, reads
	// every one of those).
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("testenv: reading the QR code: %v", err)
	}
	return res.GetText()
}
