package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/ticketqr"
)

// qrCacheControl lets the buyer's browser keep a ticket's image for a day:
// the code it draws never changes.
const qrCacheControl = "private, max-age=86400, immutable"

// ticketQR serves GET /v1/tickets/{id}/qr (its buyer): the ticket's code as a
// QR code, a PNG the door's scanner reads. Another buyer's ticket is 404, and
// so is one its buyer transferred (its code admits no one). The
// image never changes, so it is not counted in buyer-concurrency (the tickets
// page loads every image at once), it has an ETag (If-None-Match that matches:
// 304, nothing drawn), and each code is drawn once per instance (qrCache).
func (s *Server) ticketQR(c echo.Context) error {
	id, ok := ids.Parse(c.Param("id"))
	if !ok {
		return errkind.NotFoundf("no such ticket")
	}
	tickets, err := s.checkout.Tickets(c.Request().Context(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	for _, t := range tickets {
		if t.ID != id {
			continue
		}
		if t.Transferred {
			return errkind.NotFoundf("the ticket was transferred: its code admits no one, and its receiver holds a new one")
		}
		h := c.Response().Header()
		h.Set("Cache-Control", qrCacheControl)
		h.Set("ETag", qrETag(t.Code))
		if etagMatches(c.Request().Header.Get("If-None-Match"), qrETag(t.Code)) {
			return c.NoContent(http.StatusNotModified)
		}
		img, err := s.qrCodes.png(t.Code)
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "image/png", img)
	}
	return errkind.NotFoundf("no such ticket")
}

// qrETag is the entity tag of a code's image: a digest of the code (the
// image's only input, beside how it is drawn: ticketqr.Drawing), so that the
// tag shows nothing of the code.
func qrETag(code string) string {
	sum := sha256.Sum256([]byte(ticketqr.Drawing + code))
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// etagMatches reports whether an If-None-Match header names etag (or is "*"),
// compared weakly, as RFC 9110 says If-None-Match is.
func etagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// qrCache keeps the images of the codes drawn last, at most maxQRImages (about
// 1.5 KB each): drawing one takes about a millisecond of CPU, and with no
// in-flight count a page's reloads must not draw them again.
type qrCache struct {
	mu     sync.Mutex
	images map[string][]byte // by code
}

const maxQRImages = 4096

func (q *qrCache) png(code string) ([]byte, error) {
	q.mu.Lock()
	img, ok := q.images[code]
	q.mu.Unlock()
	if ok {
		return img, nil
	}
	img, err := ticketqr.PNG(code)
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.images == nil || len(q.images) >= maxQRImages {
		q.images = make(map[string][]byte) // forget them all: each is drawn again once
	}
	q.images[code] = img
	return img, nil
}
