package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// On an event with a waiting room the buyer first sees the queue: joins,
// waits behind three others (admitted two a second), is admitted, and then
// holds a seat.
func TestWaitingRoomAdmitsThenHolds(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Farewell Tour", 2)
	ahead := []*client{s.signUp(t, "buyer"), s.signUp(t, "buyer"), s.signUp(t, "buyer")}
	buyer := s.signUp(t, "buyer")
	b := newBrowser(t, s)
	b.logIn(buyer.Email)

	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitText(".queue", "This sale has a waiting room")
	if visible := b.eval(`!document.querySelector(".seats")?.hidden && !!document.querySelector(".seats")`); string(visible) == "true" {
		t.Error("the seat map is shown before the buyer is admitted")
	}
	b.page("queue-join")

	// Three buyers join just before her: at two a second she waits about 1.5 s.
	for _, c := range ahead {
		c.must(t, 200, "POST", "/v1/events/"+ev.ID+"/queue", nil, nil)
	}
	b.clickButton("Join the queue")
	b.waitText(".queue", "in the queue")
	b.waitText(".queue", "Estimated wait")
	b.page("queue-waiting")

	b.waitText(".queue", "It is your turn")
	b.waitJS("the admission's time left", `/\d+:\d\d/.test(document.querySelector(".queue [role=timer]")?.textContent)`)
	b.waitJS("the seat map", `!document.querySelector(".seats").hidden && document.querySelectorAll(".seat").length > 0`)
	b.page("queue-admitted")

	b.click(seatSelector(ev.seat(t, "Stalls", "B", 4)))
	b.clickPrefix("Hold 1 seat")
	b.waitHeading("Your hold")
	b.waitText("main", "Stalls, row B, seat 4")
}

// admit has the client join the event's queue and polls until admitted.
func (c *client) admit(t *testing.T, eventID string) {
	t.Helper()
	path := "/v1/events/" + eventID + "/queue"
	var q struct{ Status string }
	c.must(t, 200, "POST", path, nil, &q)
	if q.Status == "admitted" {
		return
	}
	testenv.EventuallyNil(t, waitFor, func() error {
		if c.must(t, 200, "GET", path, nil, &q); q.Status != "admitted" {
			return fmt.Errorf("the queue says %q", q.Status)
		}
		return nil
	}, "the client admitted")
}

// When every seat is in other buyers' baskets the buyer who joins is told so,
// in the room, not shown an empty map; once they pay, the room says sold out.
func TestWaitingRoomSaysClosedThenSoldOut(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Last Night", 50)
	var holders []*client
	var holds []string
	for i := range 4 { // 40 seats, 10 a buyer at most
		c := s.signUp(t, "buyer")
		c.admit(t, ev.ID)
		holders, holds = append(holders, c), append(holds, c.hold(t, ev.ID, ev.Seats[i*10:i*10+10]...))
	}
	buyer := s.signUp(t, "buyer")
	b := newBrowser(t, s)
	b.logIn(buyer.Email)
	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.clickButton("Join the queue")
	b.waitText(".queue", "in other buyers' baskets")
	if shown := b.eval(`!document.querySelector(".seats")?.hidden && !!document.querySelector(".seats")`); string(shown) == "true" {
		t.Error("the seat map is shown while every seat is held by others")
	}
	b.page("queue-closed")
	b.viewport(390, 844)
	b.noSidewaysScroll("the waiting room, closed")
	b.screenshot("queue-closed-390")
	b.viewport(1280, 900)

	for i, c := range holders {
		c.must(t, 201, "POST", "/v1/orders", map[string]string{"hold_id": holds[i], "payment_token": "tok_visa"}, nil)
	}
	b.waitText(".queue", "Sold out")
	b.page("queue-sold-out")
	b.viewport(390, 844)
	b.noSidewaysScroll("the waiting room, sold out")
	b.screenshot("queue-sold-out-390")
}

// When the organizer pauses the sale the waiting buyer is told so, keeps her
// place and is given no estimate; when it goes on (faster) she is admitted.
func TestWaitingRoomSaysPausedThenGoesOn(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	ev := org.createEvent(t, "Midnight Matinee", 1)
	ahead := []*client{s.signUp(t, "buyer"), s.signUp(t, "buyer"), s.signUp(t, "buyer"), s.signUp(t, "buyer")}
	buyer := s.signUp(t, "buyer")
	b := newBrowser(t, s)
	b.logIn(buyer.Email)
	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	// Four join just before her: at one a second she waits about 3 s.
	for _, c := range ahead {
		c.must(t, 200, "POST", "/v1/events/"+ev.ID+"/queue", nil, nil)
	}
	b.clickButton("Join the queue")
	b.waitText(".queue", "Estimated wait")

	room := "/v1/organizer/events/" + ev.ID + "/waiting-room"
	org.must(t, 200, "PATCH", room, map[string]any{"paused": true}, nil)
	b.waitText(".queue", "paused the sale")
	b.waitText(".queue", "You keep your place")
	if text := string(b.eval(`document.querySelector(".queue").textContent`)); strings.Contains(text, "Estimated wait") {
		t.Errorf("a paused room still gives an estimate: %s", text)
	}
	b.page("queue-paused")
	b.viewport(390, 844)
	b.noSidewaysScroll("the waiting room, paused")
	b.screenshot("queue-paused-390")
	b.viewport(1280, 900)

	org.must(t, 200, "PATCH", room, map[string]any{"paused": false, "admit_per_second": 50}, nil)
	b.waitText(".queue", "It is your turn")
}
