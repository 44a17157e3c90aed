package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The list of events comes a page at a time: "Show more events" asks for the
// next page (after=next_after) until there is none.
func TestEventListPages(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	const events = 14 // the page shows 12 at a time
	for i := range events {
		org.createEvent(t, fmt.Sprintf("Concert %02d", i+1), 0)
	}
	b := newBrowser(t, s)
	b.open("/events")
	b.waitJS("the first page", `document.querySelectorAll(".card").length === 12`)
	b.clickButton("Show more events")
	b.waitJS("the second page", fmt.Sprintf(`document.querySelectorAll(".card").length === %d`, events))
	b.waitJS("no more pages", `document.querySelector("main button").hidden`)
	b.page("events-all")
}

// When the live stream cannot be had, the seat map is read every 2 s instead,
// and says so; a seat held meanwhile still turns held.
func TestSeatMapFallsBackToPolling(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Matinee", 0)
	b := newBrowser(t, s)
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{
		URLPatterns: []*network.BlockPattern{{URLPattern: s.URL + "/v1/events/*/seats/stream", Block: true}},
	}); err != nil {
		t.Fatal(err)
	}
	b.open("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitText(".live-mode", "refreshed every 2 seconds")
	b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)

	taken := ev.seat(t, "Balcony", "A", 5)
	s.signUp(t, "buyer").hold(t, ev.ID, taken)
	start := time.Now()
	b.waitJS("the seat held", fmt.Sprintf(`document.querySelector(%q)?.classList.contains("seat-held")`, seatSelector(taken)))
	t.Logf("polling showed the seat held %v after the hold", time.Since(start).Round(10*time.Millisecond))
	b.page("event-polling")
}

// A visitor who is not logged in meets no failed request (no 4xx or 5xx, which
// the browser reports as console errors) on the home page, an event's page or
// the door: the pages ask who is logged in with GET /v1/web/session, which
// answers 200 either way.
func TestALoggedOutVisitMeetsNoError(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Open Air", 0)
	b := newBrowser(t, s)
	for _, p := range []struct{ url, ready string }{
		{"/#/events", `document.querySelectorAll(".card").length > 0`},
		{"/#/events/" + ev.ID, `document.querySelectorAll(".seat").length > 0`},
		{"/door", `!document.getElementById("setup").hidden`},
	} {
		b.run("open "+p.url, chromedp.Navigate(b.base+p.url))
		b.waitJS(p.url+" drawn", p.ready)
		var failed []string
		json.Unmarshal(b.eval(`performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
			.filter(e => e.responseStatus >= 400).map(e => e.responseStatus + " " + e.name)`), &failed)
		if len(failed) > 0 {
			t.Errorf("%s: failed requests %q", p.url, failed)
		}
		var asked bool
		json.Unmarshal(b.eval(`performance.getEntriesByType("resource").some(e => new URL(e.name).pathname === "/v1/web/session")`), &asked)
		if !asked && p.url != "/door" {
			t.Errorf("%s did not ask GET /v1/web/session who is logged in", p.url)
		}
	}
}
