package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// acceptDialogs accepts every dialog the page opens (confirm), from now on.
func (b *browser) acceptDialogs() {
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
}

// signUpOrganizer signs an organizer up through the page's form and waits
// for their events' page.
func (b *browser) signUpOrganizer(name, email string) {
	b.t.Helper()
	b.signUp("organizer", name, email)
	b.waitHeading("My events")
}

// newEventForm opens the organizer's form for a new event and fills its
// name, venue and start.
func (b *browser) newEventForm(name, venue string, starts time.Time) {
	b.t.Helper()
	b.goTo("/organizer/events/new")
	b.waitHeading("New event")
	b.fill("Name", name)
	b.fill("Venue", venue)
	b.set("Starts at", starts.Format("2006-01-02T15:04"))
}

// An organizer signs up, creates an event and a scanner key in the browser
// (the key shown once, and copied); a door scans a ticket with that key
// through the API, and the organizer sees the scan in the event's audit.
func TestOrganizerEventKeyAndAudit(t *testing.T) {
	s := startStack(t, nil)
	b := newBrowser(t, s)
	email := newEmail("opera")
	b.signUpOrganizer("Opera", email)
	b.page("organizer-no-events")

	starts := time.Now().Add(60 * 24 * time.Hour)
	b.newEventForm("Summer Opera", "Opera House", starts)
	// The first section's fields come filled (Stalls, 5 rows of 10 at 45.00): change the price.
	b.set("Price", "")
	b.fill("Price", "52.50")
	b.clickButton("Add a section")
	b.waitJS("a second section", `document.querySelectorAll(".section-fields").length === 2`)
	b.eval(`(() => { const fs = document.querySelectorAll(".section-fields")[1];
		const set = (sel, v) => { const e = fs.querySelector(sel); e.value = v; e.dispatchEvent(new Event("input", {bubbles: true})); };
		set("[data-name]", "Balcony"); set("[data-rows]", "2"); set("[data-seats]", "6"); set("[data-price]", "20"); })()`)
	b.page("new-event")
	b.clickButton("Create event")
	b.waitHeading("My events")
	b.waitText("#notice-text", "Summer Opera")
	b.waitText("main table", "Summer Opera")
	b.page("organizer-events")

	org := s.logIn(t, email)
	var mine struct {
		Events []struct {
			ID       string
			Currency string
			Sections []struct {
				Name       string
				PriceCents int `json:"price_cents"`
			}
			SeatsTotal int `json:"seats_total"`
		}
	}
	org.must(t, 200, "GET", "/v1/organizer/events", nil, &mine)
	if len(mine.Events) != 1 || mine.Events[0].SeatsTotal != 5*10+2*6 {
		t.Fatalf("the organizer's events: %+v", mine.Events)
	}
	eventID := mine.Events[0].ID
	var created struct {
		Sections []struct {
			PriceCents int `json:"price_cents"`
		}
	}
	org.must(t, 200, "GET", "/v1/events/"+eventID, nil, &created)
	if len(created.Sections) != 2 || created.Sections[0].PriceCents != 5250 || created.Sections[1].PriceCents != 2000 {
		t.Errorf("the sections' prices are %+v, want 5250 and 2000 cents", created.Sections)
	}

	// A scanner key for the event, shown once, copied with the button.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.Call(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: s.URL,
		}); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	b.goTo("/organizer/keys")
	b.waitHeading("Scanner keys")
	b.fill("Label", "North gate 1")
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector("select"); e.value = %q; e.dispatchEvent(new Event("change")); })()`, eventID))
	b.clickButton("Create key")
	b.waitJS("the new key", `document.querySelector("#new-key-value")?.textContent.startsWith("sdk_")`)
	key := b.text("#new-key-value")
	b.clickButton("Copy key")
	b.waitText(".key-panel", "Copied.")
	var copied string
	json.Unmarshal(b.eval(`navigator.clipboard.readText()`), &copied)
	if copied != key {
		t.Errorf("the clipboard holds %q, want the key", copied)
	}
	b.waitText("main table", "North gate 1")
	b.page("scanner-keys")

	// The key is shown once: after a reload the page lists the key, not its secret.
	b.run("reloading", chromedp.Reload())
	b.waitText("main table", "North gate 1")
	if strings.Contains(b.text("body"), key) {
		t.Error("the key is shown again after a reload")
	}

	// The door: a buyer's ticket is admitted, then a code that is no ticket.
	buyer := s.signUp(t, "buyer")
	var seats struct{ Seats []seat }
	buyer.must(t, 200, "GET", "/v1/events/"+eventID+"/seats", nil, &seats)
	codes := buyer.buy(t, eventID, seats.Seats[0])
	door := s.scanner(t, key)
	door.must(t, 200, "POST", "/v1/scans", map[string]string{"code": codes[0]}, nil)
	door.must(t, 404, "POST", "/v1/scans", map[string]string{"code": "NOT-A-TICKET"}, nil)

	b.goTo("/organizer")
	b.waitHeading("My events")
	b.click(fmt.Sprintf(`a[href="#/organizer/events/%s/scans"]`, eventID))
	b.waitHeading("Scans of Summer Opera")
	b.waitText("main table", "Admitted")
	// The ticket by its reference and seat, not a piece of its code.
	var held struct{ Tickets []struct{ Reference string } }
	buyer.must(t, 200, "GET", "/v1/tickets", nil, &held)
	ref := held.Tickets[0].Reference
	b.waitText("main table", ref[:4]+"-"+ref[4:8]+"-"+ref[8:]+" · ")
	b.waitText("main table", "row A")
	b.waitText("main table", "Not a ticket")
	b.waitText("main table", "North gate 1")
	b.page("scans")

	// A lost device's key is revoked (after a confirm dialog, accepted here)
	// and stops working at once.
	b.acceptDialogs()
	b.goTo("/organizer/keys")
	b.waitHeading("Scanner keys")
	b.click(`button[aria-label="Revoke North gate 1"]`)
	b.waitText("#notice-text", "is revoked")
	b.waitText("main table", "Revoked")
	door.must(t, 401, "POST", "/v1/scans", map[string]string{"code": codes[0]}, nil)

	b.clickButton("Log out")
	b.waitText("#nav", "Log in")
	b.waitText("#notice-text", "You are logged out")
	org.must(t, 200, "GET", "/v1/me", nil, nil) // the API's own session is another
}
