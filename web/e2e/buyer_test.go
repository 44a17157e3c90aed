package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// seatSelector is the CSS selector of a seat's button on the map.
func seatSelector(s seat) string { return fmt.Sprintf(`.seat[data-id=%q]`, s.ID) }

// A buyer signs up in the browser, watches a seat turn held live, holds two
// seats, pays with tok_visa and gets two QR codes that read as their tickets.
func TestBuyerBuysTwoSeats(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	ev := org.createEvent(t, "Spring Gala", 0)
	b := newBrowser(t, s)

	email := newEmail("ada")
	b.open("/events")
	b.waitText("main", "Spring Gala")
	b.page("events-anonymous")
	b.signUp("buyer", "Ada", email)
	b.waitHeading("Upcoming events")

	b.click(fmt.Sprintf(`a[href="#/events/%s"]`, ev.ID))
	b.waitHeading("Spring Gala")
	b.waitText(".live-mode", "live")

	t.Run("a seat held through the API turns held within 2 s", func(t *testing.T) {
		taken := ev.seat(t, "Stalls", "C", 8)
		other := s.signUp(t, "buyer")
		other.hold(t, ev.ID, taken)
		start := time.Now()
		b.waitJS("the seat held", fmt.Sprintf(`document.querySelector(%q)?.classList.contains("seat-held")`, seatSelector(taken)))
		took := time.Since(start)
		t.Logf("the seat turned held on the page %v after the hold", took.Round(10*time.Millisecond))
		if took > 2*time.Second {
			t.Errorf("the seat turned held after %v, want within 2 s", took)
		}
		label := b.attr(seatSelector(taken), "aria-label")
		if label != "Stalls, row C, seat 8, held, $45.00" {
			t.Errorf("the held seat's name is %q", label)
		}
	})

	a1, a2 := ev.seat(t, "Stalls", "A", 1), ev.seat(t, "Stalls", "A", 2)
	t.Run("two seats chosen, by mouse and by keyboard, are held", func(t *testing.T) {
		b.click(seatSelector(a1))
		// The map is one tab stop: the arrow moves to A2, Space chooses it.
		b.key(kb.ArrowRight)
		b.key(" ")
		b.waitText(".summary", "2 seats chosen")
		if got := b.attr(seatSelector(a2), "aria-pressed"); got != "true" {
			t.Errorf("A2 aria-pressed = %q after Space", got)
		}
		b.page("event-two-chosen")
		b.clickButton("Hold 2 seats · $90.00")
		b.waitHeading("Your hold")
		b.waitText("main", "Stalls, row A, seat 1")
		b.waitJS("the countdown", `/\d+:\d\d/.test(document.querySelector("[role=timer]")?.textContent)`)
		b.page("hold")
	})

	t.Run("tok_visa pays and the QR codes read as the tickets", func(t *testing.T) {
		b.clickButton("Pay $90.00")
		b.waitHeading("My tickets")
		b.waitJS("two tickets", `document.querySelectorAll(".ticket").length === 2`)
		b.waitText("#notice", "Payment confirmed")
		b.page("tickets")

		b.qrCodesRead(t, s.logIn(t, email).ticketCodes(t), 2)
	})

	t.Run("printed, the tickets stand alone", func(t *testing.T) {
		b.media("print")
		defer b.media("")
		var hidden bool
		json.Unmarshal(b.eval(`["#nav", ".site-footer", ".notice", "main button"].every(s =>
			document.querySelector(s).getClientRects().length === 0)`), &hidden)
		if !hidden {
			t.Error("printed, the page still shows its navigation, messages or buttons")
		}
		b.screenshot("tickets-print")
	})

	t.Run("at 360 px the event and tickets pages reflow", func(t *testing.T) {
		b.viewport(360, 740)
		b.goTo("/events/" + ev.ID)
		b.waitHeading("Spring Gala")
		b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
		b.noSidewaysScroll("event")
		b.screenshot("event-360px")
		// The map fits its box: it is scaled, not scrolled.
		b.mapFits(t)
		b.goTo("/tickets")
		b.waitJS("the tickets", `document.querySelectorAll(".ticket").length === 2`)
		b.noSidewaysScroll("tickets")
		b.screenshot("tickets-360px")
	})
}

// qrCodesRead checks that the page's QR codes read as the tickets' codes,
// n of them.
func (b *browser) qrCodesRead(t *testing.T, want []string, n int) {
	t.Helper()
	var got []string
	for _, png := range b.imageBytes("img.qr") {
		got = append(got, testenv.DecodeQR(t, png))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(got) != n {
		t.Errorf("the QR codes read %q, want the %d tickets %q", got, n, want)
	}
}
