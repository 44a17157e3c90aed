package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/app"
)

// holdInBrowser chooses the seats on the event page and holds them; it
// returns the hold's id, read from the hold page's address.
func (b *browser) holdInBrowser(ev event, seats ...seat) string {
	b.t.Helper()
	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
	for _, s := range seats {
		b.click(seatSelector(s))
	}
	b.waitText(".summary", fmt.Sprintf("%d seat", len(seats)))
	b.clickPrefix("Hold ")
	b.waitHeading("Your hold")
	var hash string
	json.Unmarshal(b.eval(`location.hash`), &hash)
	return strings.TrimPrefix(hash, "#/holds/")
}

// clickPrefix clicks the enabled button whose text starts with prefix.
func (b *browser) clickPrefix(prefix string) {
	b.t.Helper()
	b.waitJS("a button "+prefix+"…", fmt.Sprintf(`[...document.querySelectorAll("button")].some(e => e.textContent.startsWith(%q) && !e.disabled)`, prefix))
	b.eval(fmt.Sprintf(`[...document.querySelectorAll("button")].find(e => e.textContent.startsWith(%q) && !e.disabled).click()`, prefix))
}

// buyerOnEvent makes an event named name (a new organizer's, without a waiting
// room) and a buyer logged in on a browser of its own.
func buyerOnEvent(t *testing.T, s *stack, name string) (event, *client, *browser) {
	t.Helper()
	ev := s.signUp(t, "organizer").createEvent(t, name, 0)
	buyer := s.signUp(t, "buyer")
	b := newBrowser(t, s)
	b.logIn(buyer.Email)
	return ev, buyer, b
}

// payWith picks the test card token on the hold page and pays the $25.00.
func (b *browser) payWith(token string) {
	b.t.Helper()
	b.click("#card-" + token)
	b.clickButton("Pay $25.00")
}

// stillHeld wants the API to say the buyer's hold is still active after what
// happened to the payment.
func stillHeld(t *testing.T, buyer *client, holdID, after string) {
	t.Helper()
	var hold struct{ Status string }
	buyer.must(t, 200, "GET", "/v1/holds/"+holdID, nil, &hold)
	if hold.Status != "active" {
		t.Errorf("after %s the hold is %q, want active", after, hold.Status)
	}
}

// A declined card keeps the hold: the page says so, the API agrees, and
// another card then pays for it.
func TestDeclineKeepsTheHold(t *testing.T) {
	s := startStack(t, nil)
	ev, buyer, b := buyerOnEvent(t, s, "Autumn Recital")
	holdID := b.holdInBrowser(ev, ev.seat(t, "Balcony", "B", 3))

	b.payWith("tok_declined")
	b.waitText("#notice-text", "Your card was declined")
	if text := b.text("#notice-text"); !strings.Contains(text, "your seats are still held for") {
		t.Errorf("the notice does not say the seats are still held: %q", text)
	}
	b.page("declined")

	stillHeld(t, buyer, holdID, "the decline")

	// A card that fails: nothing is charged, and the page retries the same
	// attempt by itself after Retry-After, counting down, until stopped.
	b.payWith("tok_error")
	b.waitText("#notice-text", "Payments aren't working")
	b.waitJS("the countdown", `/Trying the payment again in 0:0\d/.test(document.querySelector("#notice-countdown").textContent)`)
	b.page("payment-unavailable")
	b.clickButton("Stop trying")
	b.waitText("#notice-text", "The payment was stopped")
	stillHeld(t, buyer, holdID, "the failure")

	// Another card, another attempt (a new Idempotency-Key): it pays.
	b.payWith("tok_visa")
	b.waitHeading("My tickets")
	b.waitJS("one ticket", `document.querySelectorAll(".ticket").length === 1`)
}

// A card that keeps failing is retried by itself twice, each try shown, and
// then left to the buyer: every retry reaches Payrail and spends one of the
// buyer's payment attempts, so the page does not spend them all on its own.
// The seats stay held, and another card pays.
func TestAFailingCardIsRetriedTwiceThenLeftToTheBuyer(t *testing.T) {
	s := startStack(t, nil)
	ev, buyer, b := buyerOnEvent(t, s, "Winter Recital")
	holdID := b.holdInBrowser(ev, ev.seat(t, "Balcony", "B", 4))

	b.payWith("tok_error")
	b.waitText("#notice-text", "Payments aren't working")
	b.waitText(".progress", "try 2 of 3")
	b.waitText(".progress", "try 3 of 3")
	b.waitText("#notice-text", "Nothing was charged. Your seats are still held for")
	b.waitJS("the page stops trying", `document.querySelector(".progress").textContent === "" && !document.querySelector("#notice-countdown")?.textContent.includes("Trying")`)
	b.page("failing-card-left-to-the-buyer")
	b.viewport(390, 844)
	b.noSidewaysScroll("the hold, the failing card left to the buyer")
	b.screenshot("failing-card-left-to-the-buyer-390")
	b.viewport(1280, 900)
	stillHeld(t, buyer, holdID, "the failures")

	b.payWith("tok_visa")
	b.waitHeading("My tickets")
}

// With hold-buyer at 1 in 5 s, a second hold is refused: the page says so in
// words (not the limit's name) and counts down; the buyer may cancel, and a hold asked for again is
// retried by itself when the countdown ends, and lands.
func TestHoldLimitShowsCountdown(t *testing.T) {
	s := startStack(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "1/5s"})
	ev, _, b := buyerOnEvent(t, s, "Winter Sale")
	first := ev.seat(t, "Stalls", "A", 1)
	b.holdInBrowser(ev, first)

	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitJS("the held seat drawn as mine", fmt.Sprintf(`document.querySelector(%q)?.classList.contains("seat-mine")`, seatSelector(first)))
	second := ev.seat(t, "Stalls", "A", 2)
	b.click(seatSelector(second))
	b.clickPrefix("Hold 1 seat")
	b.waitText("#notice-text", "Too many tries in a short time")
	b.waitJS("the countdown", `/Trying again in 0:0[1-5]/.test(document.querySelector("#notice-countdown").textContent)`)
	b.page("hold-limited")
	b.clickButton("Cancel")
	b.waitText("#notice-text", "Holding was cancelled")

	b.clickPrefix("Hold 1 seat")
	b.waitText("#notice-text", "Too many tries in a short time")
	b.waitHeading("Your hold") // retried by itself once the countdown ended
	b.waitText("main", "Stalls, row A, seat 2")

	// The hold page gives the seats back.
	b.clickButton("Give the seats back")
	b.waitHeading(ev.Name)
	b.waitText("#notice-text", "Your seats were given back")
	b.waitJS("the seat available again", fmt.Sprintf(`document.querySelector(%q)?.classList.contains("seat-available")`, seatSelector(second)))
}

// Seats a buyer gave back cool for that buyer (STAGEDOOR_REHOLD_COOLDOWN):
// holding them again at once is refused in words with a countdown, the
// choice stays, and once the countdown ends the same seat is held.
func TestGivenBackSeatsCoolWithACountdown(t *testing.T) {
	s := startStack(t, map[string]string{"STAGEDOOR_REHOLD_COOLDOWN": "4s"})
	ev, _, b := buyerOnEvent(t, s, "Spring Recital")
	seat := ev.seat(t, "Balcony", "B", 5)
	b.holdInBrowser(ev, seat)
	b.clickButton("Give the seats back")
	b.waitHeading(ev.Name)
	b.waitJS("the seat available again", fmt.Sprintf(`document.querySelector(%q)?.classList.contains("seat-available")`, seatSelector(seat)))

	b.click(seatSelector(seat))
	b.clickPrefix("Hold 1 seat")
	b.waitText("#notice-text", "You gave these seats back a moment ago")
	b.waitText("#notice-countdown", "You can hold them again in")
	b.page("given-back-seats-cooling")
	b.viewport(390, 844)
	b.noSidewaysScroll("the event page, seats cooling")
	b.screenshot("given-back-seats-cooling-390")
	b.viewport(1280, 900)
	b.waitJS("the countdown to end", `document.querySelector("#notice-countdown").textContent === ""`)
	b.clickPrefix("Hold 1 seat")
	b.waitHeading("Your hold")
}

// A payment whose outcome is unknown (Payrail slower than the payment
// timeout: 202, the order pending) shows "confirming your payment" and polls
// the order until recovery settles it, then shows the tickets.
func TestPendingPaymentIsConfirmed(t *testing.T) {
	s := startStackWith(t, stackOptions{
		env:            map[string]string{"STAGEDOOR_PAYMENT_TIMEOUT": "200ms", "STAGEDOOR_RECOVERY_AFTER": "600ms"},
		payrailLatency: 400 * time.Millisecond, // the charge is made, its answer late
		loops:          app.Recovery,
	})
	ev, _, b := buyerOnEvent(t, s, "Late Show")
	b.holdInBrowser(ev, ev.seat(t, "Stalls", "B", 5))
	b.clickButton("Pay $45.00")
	b.waitText(".progress", "Confirming your payment")
	b.page("payment-pending")
	b.waitHeading("My tickets")
	b.waitJS("one ticket", `document.querySelectorAll(".ticket").length === 1`)
}
