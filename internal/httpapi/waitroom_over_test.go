package httpapi_test

import (
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestTheRoomKnowsWhenItIsOver: with every seat in Ada's hold, a buyer who
// joins or polls is told closed (seats_held) with her place kept, not
// admitted to an empty map; when the hold expires the room reopens and she
// is admitted; once every seat is sold, joining and polling say sold_out,
// and the next poll with the token too.
func TestTheRoomKnowsWhenItIsOver(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_HOLD_TTL", "2s")
	ada, bob, cy := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	event, seats := newEvent(t, s.testServer, s.org, roomEventBody(1, 2, 1000, time.Now().Add(-time.Minute)))
	poll := func(who testAccount, token string) queueJSON {
		t.Helper()
		header := who.bearer()
		if token != "" {
			header = append(header, "Queue-Token", token)
		}
		a := s.request(t, "GET", queuePath(event), "", header...)
		if a.StatusCode != 200 {
			t.Fatalf("poll = %d %s", a.StatusCode, a.raw)
		}
		return as[queueJSON](t, a)
	}
	admitted(t, s.testServer, ada, event)
	hold := s.request(t, "POST", "/v1/holds", holdBody(event, seats...), ada.bearer()...)
	if hold.StatusCode != 201 {
		t.Fatalf("Ada's hold of every seat = %d %s", hold.StatusCode, hold.raw)
	}

	// The seat counts are at most a second old: Bob's join may still say
	// admitted, his polls within the second say closed.
	a := s.request(t, "POST", queuePath(event), "", bob.bearer()...)
	q := as[queueJSON](t, a)
	if a.StatusCode != 200 || q.Status != "closed" && q.Status != "admitted" {
		t.Fatalf("Bob joining = %d %s", a.StatusCode, a.raw)
	}
	waitFor(t, 3*time.Second, "Bob told the room is closed", func() bool {
		q = poll(bob, q.QueueToken)
		return q.Status == "closed"
	})
	if q.ClosedReason != "seats_held" || q.AdmittedUntil == nil || q.Position != nil || q.QueueToken == "" {
		t.Fatalf("Bob polling while every seat is held = %+v; want closed, seats_held, his admission kept", q)
	}
	waitFor(t, 10*time.Second, "the room reopening when Ada's hold expires", func() bool {
		q = poll(bob, q.QueueToken)
		return q.Status == "admitted"
	})

	hold = s.request(t, "POST", "/v1/holds", holdBody(event, seats...), bob.bearer()...)
	if hold.StatusCode != 201 {
		t.Fatalf("Bob's hold = %d %s", hold.StatusCode, hold.raw)
	}
	if a := s.checkout(t, bob, orderBody(as[holdJSON](t, hold).ID, "tok_visa"), "k-bob"); a.StatusCode != 201 {
		t.Fatalf("Bob's checkout = %d %s", a.StatusCode, a.raw)
	}
	waitFor(t, 3*time.Second, "Bob's poll saying sold out", func() bool {
		q = poll(bob, q.QueueToken)
		return q.Status == "sold_out"
	})
	if q.Position != nil || q.AdmittedUntil != nil || q.ClosedReason != "" {
		t.Errorf("sold out = %+v; want no place to keep", q)
	}
	a = s.request(t, "POST", queuePath(event), "", cy.bearer()...)
	if q := as[queueJSON](t, a); a.StatusCode != 200 || q.Status != "sold_out" {
		t.Errorf("Cy joining a sold-out room = %d %s, want sold_out", a.StatusCode, a.raw)
	}
	s.noViolations(t)
}
