package ticketqr_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/ticketqr"
)

// TestAQRCodeReadsAsItsCode: the PNG decodes to the code it was drawn from,
// and is at most Pixels a side with its quiet zone.
func TestAQRCodeReadsAsItsCode(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "SD1Q2W3E4R5T6Y7U8I9O0PASDFGHJKLZXCVBNMQWERTYUIOPASDFGHJKLZXCVBNMQW"} {
		img, err := ticketqr.PNG(code)
		if err != nil {
			t.Fatal(err)
		}
		if got := testenv.DecodeQR(t, img); got != code {
			t.Errorf("the QR code of %q reads %q", code, got)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Width != cfg.Height || cfg.Width > ticketqr.Pixels || cfg.Width < ticketqr.Pixels*3/4 {
			t.Errorf("the image is %d×%d; want a square of about %d", cfg.Width, cfg.Height, ticketqr.Pixels)
		}
	}
}
