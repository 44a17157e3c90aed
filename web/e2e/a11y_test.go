package e2e

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp/kb"
)

// The pages the other tests do not reach pass axe-core too, and the seat map
// is one tab stop that the arrow keys move through. (Every other test checks
// each page it reaches with axe-core as well: browser.page.)
func TestAccessibility(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Open Rehearsal", 0)
	b := newBrowser(t, s)

	for _, p := range []struct{ route, heading, name string }{
		{"/login", "Log in", "login"},
		{"/signup", "Sign up", "signup"},
		{"/no/such/page", "Page not found", "not-found"},
		{"/events/" + ev.ID, ev.Name, "event-anonymous"}, // last: the subtest uses it
	} {
		b.open(p.route)
		b.waitHeading(p.heading)
		if p.name == "event-anonymous" {
			b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
		}
		b.page(p.name)
	}

	t.Run("the skip link moves the focus to the content", func(t *testing.T) {
		b.eval(`document.querySelector(".skip-link").focus()`)
		b.key("\r")
		var where struct{ Focus, Hash string }
		json.Unmarshal(b.eval(`({focus: document.activeElement.id, hash: location.hash})`), &where)
		if where.Focus != "main" || where.Hash != "#/events/"+ev.ID {
			t.Errorf("after the skip link the focus is on #%s at %s", where.Focus, where.Hash)
		}
	})

	t.Run("the seat map is one tab stop, moved through with the arrows", func(t *testing.T) {
		// Focus the control just before the map (its zoom buttons), then Tab into it.
		b.eval(`document.querySelector(".zoom-fit").focus()`)
		b.key(kb.Tab)
		first := focused(t, b)
		if first != "Stalls, row A, seat 1, available, $45.00" {
			t.Errorf("Tab into the map focuses %q, want Stalls A1", first)
		}
		b.key(kb.ArrowDown)
		b.key(kb.ArrowRight)
		if got := focused(t, b); got != "Stalls, row B, seat 2, available, $45.00" {
			t.Errorf("Down then Right focuses %q, want Stalls B2", got)
		}
		b.key(kb.End)
		if got := focused(t, b); got != "Stalls, row B, seat 8, available, $45.00" {
			t.Errorf("End focuses %q, want Stalls B8", got)
		}
		b.key(kb.Tab)
		if got := focused(t, b); got != "" {
			t.Errorf("Tab from the map focuses another seat, %q: the map must be one tab stop", got)
		}
		// An anonymous reader is told how to choose, rather than choosing.
		b.eval(`document.querySelector(".seatmap .seat[tabindex='0']").focus()`)
		b.key(" ")
		b.waitText(".summary", "Log in as a buyer to choose seats")
		b.waitText(".seatmap-toast", "Log in as a buyer to choose seats") // beside the seat too
	})
}

// focused is the accessible name of the focused seat ("" when the focus is
// not on a seat).
func focused(t *testing.T, b *browser) string {
	t.Helper()
	var name string
	json.Unmarshal(b.eval(`document.activeElement?.matches(".seat") ? document.activeElement.getAttribute("aria-label") : ""`), &name)
	return name
}
