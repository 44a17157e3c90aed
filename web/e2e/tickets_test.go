package e2e

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// A buyer's eight tickets: the first load of every QR image fails (503, as
// a busy instance answers), and the tickets page asks again until all eight
// show, each reading as its ticket; at a phone's 390 px and a desktop's 1280.
func TestTheTicketsPageRetriesAQRCodeThatFails(t *testing.T) {
	var seen sync.Map
	var refused atomic.Int64
	s := startStackWith(t, stackOptions{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/qr") {
				if _, again := seen.LoadOrStore(r.URL.Path, true); !again {
					refused.Add(1)
					w.Header().Set("Retry-After", "1")
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"type":"/problems/service-overloaded","title":"Service overloaded","status":503}`))
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}})
	org := s.signUp(t, "organizer")
	ev := org.createEvent(t, "QR Night", 0)
	b := newBrowser(t, s)
	email := newEmail("quinn")
	b.open("/events")
	b.signUp("buyer", "Quinn", email)
	b.waitHeading("Upcoming events")
	buyer := s.logIn(t, email)
	buyer.buy(t, ev.ID, ev.Seats[:8]...)

	b.goTo("/tickets")
	b.waitHeading("My tickets")
	b.waitJS("eight tickets", `document.querySelectorAll(".ticket").length === 8`)
	pngs := b.imageBytes("img.qr") // waits for every image to be loaded
	var got []string
	for _, png := range pngs {
		got = append(got, testenv.DecodeQR(t, png))
	}
	want := buyer.ticketCodes(t)
	slices.Sort(got)
	slices.Sort(want)
	if len(got) != 8 || !slices.Equal(got, want) {
		t.Errorf("the QR codes read %q, want the tickets %q", got, want)
	}
	if n := refused.Load(); n != 8 {
		t.Errorf("%d first loads of a QR image were refused, want 8: the page did not load them all at once", n)
	}
	if b.text(".qr-missing") != "" {
		t.Errorf("a card says its QR code did not load: %q", b.text(".qr-missing"))
	}
	b.page("tickets-1280px")

	b.viewport(390, 844)
	b.goTo("/events")
	b.waitHeading("Upcoming events")
	b.goTo("/tickets")
	b.waitJS("eight tickets", `document.querySelectorAll(".ticket").length === 8`)
	b.imageBytes("img.qr")
	b.noSidewaysScroll("tickets")
	b.page("tickets-390px")
}
