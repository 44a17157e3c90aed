package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// colorScheme emulates the system's colour scheme ("dark", "light"; "" for
// the machine's own), which the pages follow with prefers-color-scheme.
func (b *browser) colorScheme(scheme string) {
	b.t.Helper()
	features := []*emulation.MediaFeature{}
	if scheme != "" {
		features = append(features, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: scheme})
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		b.t.Fatalf("emulating prefers-color-scheme %q: %v", scheme, err)
	}
	b.eval(`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`)
}

// The event list shows cards: a date block, the name, venue and time and the
// lowest price ("From $25.00", "Free"); one column on a phone, a grid on a
// desktop; readable (axe's contrast) in light and dark mode.
func TestEventCards(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	org.createEvent(t, "Night Music", 0) // Stalls $45, Balcony $25
	org.createEventOf(t, "Open Rehearsal", 0, apiclient.SeatedSection("Stalls", 2, 6, 0))
	org.createEvent(t, "Late Show", 0)
	b := newBrowser(t, s)
	for _, mode := range []string{"light", "dark"} {
		b.colorScheme(mode)
		for _, width := range []int64{390, 1280} {
			b.viewport(width, 900)
			b.open("/events")
			b.waitJS("the cards", `document.querySelectorAll(".event-card").length === 3`)
			prices := b.text(".event-card:first-child .from-price")
			if prices != "From $25.00" {
				t.Errorf("the first card's price is %q, want From $25.00", prices)
			}
			if got := b.text(".event-card:nth-child(2) .from-price"); got != "Free" {
				t.Errorf("the free event's price is %q, want Free", got)
			}
			var block struct{ Day, Month string }
			json.Unmarshal(b.eval(`({day: document.querySelector(".date-day").textContent, month: document.querySelector(".date-month").textContent})`), &block)
			if block.Day == "" || block.Month == "" {
				t.Errorf("the date block is %+v, want a day and a month", block)
			}
			var columns int
			json.Unmarshal(b.eval(`new Set([...document.querySelectorAll(".event-card")].map(c => Math.round(c.getBoundingClientRect().left))).size`), &columns)
			if width == 390 && columns != 1 || width == 1280 && columns < 2 {
				t.Errorf("at %d px the cards are in %d columns", width, columns)
			}
			var bg string
			json.Unmarshal(b.eval(`getComputedStyle(document.documentElement).backgroundColor`), &bg)
			if dark := bg == "rgb(17, 19, 23)"; dark != (mode == "dark") {
				t.Errorf("in %s mode the page's background is %s", mode, bg)
			}
			b.noSidewaysScroll("events")
			b.page(fmt.Sprintf("events-%s-%d", mode, width))
		}
	}
	// The whole card answers to its link.
	b.colorScheme("")
	b.viewport(390, 900)
	b.click(".event-card:first-child .date-block")
	b.waitHeading("Night Music")
}
