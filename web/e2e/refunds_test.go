package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/app"
)

// openRefunds gives the organizer's event a refund window of a week.
func (c *client) openRefunds(t *testing.T, eventID string) {
	t.Helper()
	c.must(t, 200, "PATCH", "/v1/organizer/events/"+eventID,
		map[string]string{"refunds_until": time.Now().Add(7 * 24 * time.Hour).UTC().Format(time.RFC3339)}, nil)
}

// orderStatus reads the buyer's only order's status and what it refunded.
func (c *client) orderStatus(t *testing.T) (string, int) {
	t.Helper()
	var list struct {
		Orders []struct {
			Status        string
			RefundedCents int `json:"refunded_cents"`
		}
	}
	c.must(t, 200, "GET", "/v1/orders", nil, &list)
	if len(list.Orders) != 1 {
		t.Fatalf("the buyer has %d orders, want 1", len(list.Orders))
	}
	return list.Orders[0].Status, list.Orders[0].RefundedCents
}

// A buyer of two tickets sees them under their order, with when refunds
// close; refunds one from its card, after a dialog that says how much goes
// back and which seat stops admitting (kept once, then confirmed); the page
// then says the money is on its way and the ticket is refunded, with no code
// or QR, and the order is partially refunded by the seat's price. At 1280 px
// and at 390, with the dialog open and after.
func TestABuyerRefundsATicket(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	ev := org.createEvent(t, "Refund Night", 0)
	org.openRefunds(t, ev.ID)
	b := newBrowser(t, s)
	email := newEmail("rhea")
	b.signUp("buyer", "Rhea", email)
	buyer := s.logIn(t, email)
	buyer.buy(t, ev.ID, ev.Seats[0], ev.Seats[1])

	b.goTo("/tickets")
	b.waitHeading("My tickets")
	b.waitJS("two tickets", `document.querySelectorAll(".ticket").length === 2`)
	b.waitText(".order", "You can refund tickets until")
	b.imageBytes("img.qr")
	b.page("tickets-refundable")

	// The first ticket's refund button (its give button stands before it).
	refundFirst := `[...document.querySelectorAll(".ticket button")].find(b => b.textContent.startsWith("Refund this"))`
	b.eval(refundFirst + `.click()`)
	b.waitJS("the dialog", `document.querySelector("dialog.refund-dialog")?.open === true`)
	b.waitText("dialog.refund-dialog", "$45.00 will go back to the card you paid with")
	b.waitText("dialog.refund-dialog", "Stalls")
	b.page("refund-dialog-1280px")
	b.clickButton("Keep my tickets")
	b.waitJS("the dialog closed", `!document.querySelector("dialog.refund-dialog")`)
	if status, _ := buyer.orderStatus(t); status != "confirmed" {
		t.Fatalf("keeping the tickets left the order %s, want confirmed", status)
	}

	b.viewport(390, 844)
	b.eval(refundFirst + `.click()`)
	b.waitJS("the dialog", `document.querySelector("dialog.refund-dialog")?.open === true`)
	b.noSidewaysScroll("refund-dialog")
	b.page("refund-dialog-390px")
	b.clickButton("Refund $45.00")
	b.waitText("#notice-text", "Refunded: $45.00 will be back on your card")
	b.waitJS("one refunded ticket", `[...document.querySelectorAll(".ticket-status")].filter(p => p.textContent.startsWith("Refunded")).length === 1`)
	b.waitJS("one QR code left", `document.querySelectorAll("img.qr").length === 1`)
	b.waitText(".order", "$45.00 refunded")
	b.noSidewaysScroll("tickets-after-refund")
	b.page("tickets-after-refund-390px")
	b.viewport(1280, 900)
	b.page("tickets-after-refund-1280px")
	if status, refunded := buyer.orderStatus(t); status != "partially_refunded" || refunded != 4500 {
		t.Errorf("the order is %s with %d refunded; want partially_refunded, 4500", status, refunded)
	}
}

// An organizer changes an event's venue and refund window on its page, then
// cancels it: the button works only once the event's name is typed; the
// page then follows the refund of its order live until it says done; the
// buyer's order is refunded and the buyer's tickets page says the event was
// cancelled. At 1280 px and at 390.
func TestAnOrganizerChangesThenCancelsAnEvent(t *testing.T) {
	s := startStackWith(t, stackOptions{loops: app.Refunds})
	b := newBrowser(t, s)
	email := newEmail("otto")
	b.signUp("organizer", "Otto", email)
	org := s.logIn(t, email)
	ev := org.createEvent(t, "Storm Night", 0)
	buyer := s.signUp(t, "buyer")
	buyer.buy(t, ev.ID, ev.Seats[0])

	b.goTo("/events")
	b.waitHeading("Upcoming events")
	b.goTo("/organizer")
	b.waitHeading("My events")
	b.click(fmt.Sprintf(`a[href="#/organizer/events/%s"]`, ev.ID))
	b.waitHeading("Storm Night")
	b.set("Venue", "")
	b.fill("Venue", "Harbour Hall")
	b.set("Buyers may refund until", time.Now().Add(48*time.Hour).Format("2006-01-02T15:04"))
	b.clickButton("Save changes")
	b.waitText("#notice-text", "Your changes are saved")
	b.waitText("main", "Harbour Hall")
	b.page("organizer-event-1280px")

	b.viewport(390, 844)
	b.fill("Type the event's name to confirm", "Storm Nigh")
	if !b.disabled("button.danger") {
		t.Error("the cancel button works before the event's name is typed whole")
	}
	b.fill("Type the event's name to confirm", "t")
	b.noSidewaysScroll("organizer-event")
	b.page("organizer-event-cancel-390px")
	b.clickButton("Cancel the event")
	b.waitText("#notice-text", "is cancelled")
	b.waitText("main", "Refunding the buyers")
	b.waitText("main [role=status]", "Done: 1 order refunded, every buyer paid back.")
	b.waitText(`[data-figure="sold"] .dash-value`, "0 of 40")
	b.waitText(`[data-figure="revenue"] .dash-value`, "$0.00")
	b.waitText(`[data-figure="revenue"]`, "$45.00 taken, $45.00 refunded")
	b.page("organizer-event-cancelled-390px")
	b.viewport(1280, 900)
	b.page("organizer-event-cancelled-1280px")
	if status, refunded := buyer.orderStatus(t); status != "refunded" || refunded != 4500 {
		t.Errorf("the buyer's order is %s with %d refunded; want refunded, 4500", status, refunded)
	}
}

// disabled reports whether the element of the CSS selector is disabled.
func (b *browser) disabled(selector string) bool {
	b.t.Helper()
	return string(b.eval(fmt.Sprintf(`document.querySelector(%q).disabled`, selector))) == "true"
}
