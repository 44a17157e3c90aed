package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// The organizer opens their event on its sales: tickets sold of the
// capacity, revenue, orders and check-ins, each section's figures, and the
// seat map read-only (sold and held seats, no picker). A buyer buys through
// the API meanwhile, and the door scans a ticket: the figures and the map
// follow without a reload (the sale at once through the seat stream, the scan
// at the next poll). At 1280 and 390 px, where the tables are cards and
// nothing scrolls sideways.
// The buyers' page of the event points its organizer to the sales.
func TestTheOrganizerSeesTheSalesLive(t *testing.T) {
	s := startStack(t, nil)
	b := newBrowser(t, s)
	email := newEmail("dashboard")
	b.signUpOrganizer("Dash", email)
	org := s.logIn(t, email)
	ev := org.createEventOf(t, "Sales Night", 0,
		apiclient.SeatedSection("Stalls", 3, 8, 4500), apiclient.GeneralSection("Floor", 100, 2000))
	ada := s.signUp(t, "buyer")
	codes := ada.buy(t, ev.ID, ev.seat(t, "Stalls", "A", 1), ev.seat(t, "Stalls", "A", 2))
	var key struct{ Key string }
	org.must(t, 201, "POST", "/v1/scanner-keys", map[string]string{"label": "Gate"}, &key)
	s.scanner(t, key.Key).must(t, 200, "POST", "/v1/scans", map[string]string{"code": codes[0]}, nil)
	bea := s.signUp(t, "buyer")
	bea.hold(t, ev.ID, ev.seat(t, "Stalls", "B", 1))

	b.run("reloading", chromedp.Reload()) // signing up showed My events before the event was made
	b.waitText("main table", "Sales Night")
	b.click(fmt.Sprintf(`a[href="#/organizer/events/%s"]`, ev.ID))
	b.waitHeading("Sales Night")
	b.waitText(`[data-figure="sold"] .dash-value`, "2 of 124")
	b.waitText(`[data-figure="revenue"] .dash-value`, "$90.00")
	b.waitText(`[data-figure="orders"]`, "Paid orders1")
	b.waitText(`[data-figure="check-ins"] .dash-value`, "1 of 2")
	b.waitText(`[data-figure="held"]`, "Held now1")
	b.waitJS("the seat map, sold and held", `document.querySelectorAll(".dash-map .seatmap .seat-sold").length === 2
		&& document.querySelectorAll(".dash-map .seatmap .seat-held").length === 1`)
	if picker := b.eval(`document.querySelector("main").textContent.includes("Up to 10")
		|| document.querySelectorAll(".dash-map .seatmap [aria-pressed]").length > 0`); string(picker) != "false" {
		t.Error("the organizer's event shows the buyers' seat picker")
	}
	// A click on a seat chooses nothing.
	b.click(`.dash-map .seatmap .seat-available`)
	if n := string(b.eval(`document.querySelectorAll(".dash-map .seatmap .seat-chosen").length`)); n != "0" {
		t.Errorf("a click on the read-only map chose %s seats", n)
	}
	// The edit, cancel, orders, scans and keys parts stay reachable.
	for _, link := range []string{"Orders", "Scans at the door", "Scanner keys", "All my events"} {
		if !strings.Contains(b.text("nav.dash-nav"), link) {
			t.Errorf("the event's links have no %q", link)
		}
	}
	b.waitText("main", "Change the event")
	b.waitText("main", "Cancel the event")
	b.page("dashboard-1280px")

	// A sale through the API: the figures follow without a reload (the
	// mark set on the window now would be gone after one).
	b.eval(`window.stillThisPage = true`)
	cy := s.signUp(t, "buyer")
	cy.buy(t, ev.ID, ev.seat(t, "Stalls", "C", 8))
	b.waitText(`[data-figure="sold"] .dash-value`, "3 of 124")
	b.waitText(`[data-figure="revenue"] .dash-value`, "$135.00")
	b.waitText(`[data-figure="orders"]`, "Paid orders2")
	b.waitJS("the seat map, three sold", `document.querySelectorAll(".dash-map .seatmap .seat-sold").length === 3`)
	b.waitText(".dash-sections tbody", "3 of 24")
	// A scan changes no seat, so the stream says nothing: the poll shows it.
	s.scanner(t, key.Key).must(t, 200, "POST", "/v1/scans", map[string]string{"code": codes[1]}, nil)
	b.waitText(`[data-figure="check-ins"] .dash-value`, "2 of 3")
	if string(b.eval(`window.stillThisPage === true`)) != "true" {
		t.Error("the page was reloaded to show the sale")
	}

	b.viewport(390, 844)
	b.waitText(`[data-figure="revenue"] .dash-value`, "$135.00")
	b.noSidewaysScroll("dashboard")
	b.page("dashboard-390px")
	// On a phone the tables are cards: the events list shows the revenue.
	b.goTo("/organizer")
	b.waitText("main table", "Sales Night")
	b.waitText(`main td[data-label="Revenue"]`, "$135.00")
	b.waitJS("the revenue on screen", `document.querySelector('main td[data-label="Revenue"]').getBoundingClientRect().right <= innerWidth`)
	b.noSidewaysScroll("organizer-events")
	b.page("organizer-events-390px")
	b.goTo("/organizer/keys")
	b.waitText("main table", "Gate")
	b.noSidewaysScroll("scanner-keys")
	b.page("scanner-keys-390px")
	b.goTo("/organizer/events/" + ev.ID + "/scans")
	b.waitText("main table", "Admitted")
	b.noSidewaysScroll("scans")
	b.page("scans-390px")

	// The buyers' page of the event points its organizer to the sales.
	b.goTo("/events/" + ev.ID)
	b.waitText("main", "This is your event, as buyers see it.")
	b.click(fmt.Sprintf(`main a[href="#/organizer/events/%s"]`, ev.ID))
	b.waitText(`[data-figure="sold"] .dash-value`, "3 of 124")
}
