package e2e

import (
	"testing"
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
