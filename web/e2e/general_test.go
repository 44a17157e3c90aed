package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
)

// holdPlaces holds quantity places of the section for the client, through the API.
func (c *client) holdPlaces(t *testing.T, eventID, sectionID string, quantity int) {
	t.Helper()
	h, err := c.api.CreateHoldWithResponse(context.Background(), apiclient.HoldRequest{EventId: uuid.MustParse(eventID),
		General: []apiclient.PlacesRequest{{SectionId: uuid.MustParse(sectionID), Quantity: int32(quantity)}}})
	apitest.Expect(t, h, err, 201)
}

// bothWidths takes the page's screenshot and axe's check at 390 px (a phone)
// and at 1280 px, and leaves it at 1280.
func (b *browser) bothWidths(name string) {
	b.t.Helper()
	b.viewport(390, 844)
	b.noSidewaysScroll(name)
	b.page(name + "-390px")
	b.viewport(1280, 900)
	b.page(name + "-1280px")
}

// A buyer chooses a seat and two places of general admission on the event
// page (a quantity picker beside the seat map), holds them, pays with
// tok_visa, and gets three tickets: the seat's, and two that say "General
// admission · Lawn", whose QR codes read as the tickets. The picker keeps
// within what is left (read again from the event) and, when the last places
// go to someone else first, the hold is refused as sold out and the picker
// says so.
func TestBuyerBuysPlacesOfGeneralAdmission(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	ev := org.createEventOf(t, "Summer Fair", 0,
		apiclient.SeatedSection("Stalls", 2, 6, 4500), apiclient.GeneralSection("Lawn", 6, 3000))
	lawn := ev.Sections["Lawn"]
	b := newBrowser(t, s)
	email := newEmail("grace")
	b.open("/events")
	b.signUp("buyer", "Grace", email)
	b.waitHeading("Upcoming events")
	b.goTo("/events/" + ev.ID)
	b.waitHeading("Summer Fair")
	b.waitText("main", "General admission")
	b.waitText(".picker", "$30.00 each · 6 left")

	more := `button[aria-label="One place more of Lawn"]`
	t.Run("a seat and two places chosen, then held", func(t *testing.T) {
		b.click(seatSelector(ev.seat(t, "Stalls", "A", 1)))
		b.click(more)
		b.click(more)
		b.waitText(".summary", "1 seat chosen: Stalls, row A, seat 1. 2 × General admission · Lawn. Total $105.00.")
		if got := b.text(".quantity"); got != "2" {
			t.Errorf("the picker shows %q chosen, want 2", got)
		}
		b.bothWidths("event-seat-and-places")
		b.clickButton("Hold 3 tickets · $105.00")
		b.waitHeading("Your hold")
		b.waitText("#held-heading", "1 seat and 2 places of general admission · $105.00")
		b.waitText(".seat-list", "2 × General admission · Lawn — $30.00 each")
		b.waitText(".seat-list", "Stalls, row A, seat 1")
		b.bothWidths("hold-seat-and-places")
	})

	t.Run("paid, the places are tickets of general admission", func(t *testing.T) {
		b.clickButton("Pay $105.00")
		b.waitHeading("My tickets")
		b.waitJS("three tickets", `document.querySelectorAll(".ticket").length === 3`)
		var where []string
		json.Unmarshal(b.eval(`[...document.querySelectorAll(".ticket-seat")].map(e => e.textContent)`), &where)
		slices.Sort(where)
		if want := []string{"General admission · Lawn", "General admission · Lawn", "Stalls, row A, seat 1"}; !slices.Equal(where, want) {
			t.Errorf("the tickets say %q, want %q", where, want)
		}
		b.bothWidths("tickets-with-places")
		b.qrCodesRead(t, s.logIn(t, email).ticketCodes(t), 3)
	})

	t.Run("the picker keeps within what is left, and a sold-out hold says so", func(t *testing.T) {
		b.goTo("/events/" + ev.ID)
		b.waitText(".picker", "4 left")
		s.signUp(t, "buyer").holdPlaces(t, ev.ID, lawn, 3)
		b.waitText(".picker", "1 left") // read again within 5 s
		b.click(more)
		b.waitJS("the + turned off at what is left", fmt.Sprintf(`document.querySelector(%q).disabled`, more))
		if got := b.text(".quantity"); got != "1" {
			t.Errorf("the picker shows %q chosen of the 1 left, want 1", got)
		}
		s.signUp(t, "buyer").holdPlaces(t, ev.ID, lawn, 1) // the last place goes first
		start := time.Now()
		b.clickButton("Hold 1 ticket · $30.00")
		b.waitText("#notice", "Lawn is sold out")
		b.waitText(".picker", "Sold out")
		if got := b.text(".quantity"); got != "0" {
			t.Errorf("after sold out the picker shows %q chosen, want 0", got)
		}
		t.Logf("sold out shown %v after the click", time.Since(start).Round(10*time.Millisecond))
		b.bothWidths("event-sold-out")
	})
}

// An organizer creates an event with a section of general admission through
// the form: its kind chosen, the rows and seats give way to its places.
func TestOrganizerCreatesGeneralAdmission(t *testing.T) {
	s := startStack(t, nil)
	b := newBrowser(t, s)
	email := newEmail("fair")
	b.signUpOrganizer("Fair", email)
	b.newEventForm("Harvest Fair", "The Meadow", time.Now().Add(40*24*time.Hour))
	b.set("Kind", "general")
	b.waitJS("the places field shown, rows hidden", `!document.querySelector("[data-capacity]").closest(".field").hidden
		&& document.querySelector("[data-rows]").closest(".field").hidden`)
	b.set("Section name", "Meadow")
	b.set("Places", "")
	b.fill("Places", "300")
	b.set("Price", "")
	b.fill("Price", "12.50")
	b.bothWidths("new-event-general")
	b.clickButton("Create event")
	b.waitHeading("My events")
	b.waitText("#notice-text", "Harvest Fair")
	b.waitText("#notice-text", "300 places of general admission")

	var mine struct {
		Events []struct{ ID string }
	}
	org := s.logIn(t, email)
	org.must(t, 200, "GET", "/v1/organizer/events", nil, &mine)
	var got struct {
		Sections []struct {
			Name             string
			GeneralAdmission bool `json:"general_admission"`
			Capacity         int
			PriceCents       int `json:"price_cents"`
		}
	}
	org.must(t, 200, "GET", "/v1/events/"+mine.Events[0].ID, nil, &got)
	if len(got.Sections) != 1 || got.Sections[0].Name != "Meadow" || !got.Sections[0].GeneralAdmission ||
		got.Sections[0].Capacity != 300 || got.Sections[0].PriceCents != 1250 {
		t.Errorf("the event's sections: %+v", got.Sections)
	}
}
