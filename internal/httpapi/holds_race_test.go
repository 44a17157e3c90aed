package httpapi_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestHoldRace: 200 buyers each try to hold 2 random seats of a 50-seat event
// at once, round after round. No seat is ever in two active holds, the winners
// own exactly the seats the database says, and every refusal names only seats
// that a winner of the same race really took. Between rounds every winner
// releases, concurrently, and every seat is available again.
func TestHoldRace(t *testing.T) {
	t.Parallel()
	const buyers, rounds = 200, 5
	// 32 connections, so that many placements really meet at the same rows.
	db := postgresPool(t, 32)
	ts := newTestServer(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_ORGANIZER": "100000/1s"}, db, nil)
	org := newAccount(t, ts, auth.Organizer)
	event, seats := newEvent(t, ts, org, eventBody(5, 10))
	accounts := make([]testAccount, buyers)
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := w; i < buyers; i += 10 {
				accounts[i] = newAccount(t, ts, auth.Buyer)
			}
		})
	}
	wg.Wait()

	type attempt struct {
		seats       []string
		status      int
		holdID      string
		unavailable []string
	}
	for round := range rounds {
		attempts := make([]attempt, buyers)
		start := make(chan struct{})
		for i := range attempts {
			a, b := rand.IntN(len(seats)), rand.IntN(len(seats)-1)
			if b >= a {
				b++
			}
			attempts[i].seats = []string{seats[a], seats[b]}
			wg.Go(func() {
				<-start
				a := ts.request(t, "POST", "/v1/holds", holdBody(event, attempts[i].seats...), accounts[i].bearer()...)
				attempts[i].status = a.StatusCode
				var got struct { // a hold, or a problem naming the seats taken
					ID                 string   `json:"id"`
					UnavailableSeatIDs []string `json:"unavailable_seat_ids"`
				}
				if err := json.Unmarshal(a.raw, &got); err != nil {
					t.Errorf("hold answered %d %s", a.StatusCode, a.raw)
				}
				attempts[i].holdID, attempts[i].unavailable = got.ID, got.UnavailableSeatIDs
			})
		}
		close(start)
		wg.Wait()

		owner := map[string]string{} // seat → winning hold, from the responses
		won, refused := 0, 0
		for i, a := range attempts {
			switch a.status {
			case 201:
				won++
				for _, s := range a.seats {
					if other, taken := owner[s]; taken {
						t.Fatalf("round %d: seat %s is in holds %s and %s", round, s, other, a.holdID)
					}
					owner[s] = a.holdID
				}
			case 409:
				refused++
			default:
				t.Fatalf("round %d: buyer %d got %d, want 201 or 409", round, i, a.status)
			}
		}
		inDB := map[string]string{} // seat → hold, from the database
		rows, err := ts.DB.Query(context.Background(), `
			SELECT s.id::text, s.hold_id::text FROM seats s JOIN holds h ON h.id = s.hold_id
			WHERE s.event_id = $1 AND s.held_until > now() AND h.status = 'active'`, event)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var seat, hold string
			if err := rows.Scan(&seat, &hold); err != nil {
				t.Fatal(err)
			}
			inDB[seat] = hold
		}
		if len(inDB) != len(owner) {
			t.Fatalf("round %d: the database holds %d seats, the winners %d", round, len(inDB), len(owner))
		}
		for seat, hold := range owner {
			if inDB[seat] != hold {
				t.Fatalf("round %d: seat %s is held by %s in the database, by %s in the responses", round, seat, inDB[seat], hold)
			}
		}
		for i, a := range attempts {
			if a.status != 409 {
				continue
			}
			if len(a.unavailable) == 0 {
				t.Fatalf("round %d: buyer %d was refused naming no seat", round, i)
			}
			for _, s := range a.unavailable {
				if s != a.seats[0] && s != a.seats[1] {
					t.Fatalf("round %d: buyer %d asked for %v and was refused naming %s", round, i, a.seats, s)
				}
				if _, taken := inDB[s]; !taken {
					t.Fatalf("round %d: buyer %d was refused naming seat %s, which no active hold has", round, i, s)
				}
			}
		}
		var doubled int
		if err := ts.DB.QueryRow(context.Background(), `
			SELECT count(*) FROM (
			    SELECT seat FROM holds, unnest(seat_ids) AS seat
			    WHERE status = 'active' AND expires_at > now()
			    GROUP BY seat HAVING count(*) > 1) d`).Scan(&doubled); err != nil || doubled != 0 {
			t.Fatalf("round %d: %d seats are in two active holds (%v)", round, doubled, err)
		}
		t.Logf("round %d: %d holds won, %d refused", round, won, refused)

		for i, a := range attempts {
			if a.status == 201 {
				wg.Go(func() {
					if ans := ts.request(t, "DELETE", "/v1/holds/"+a.holdID, "", accounts[i].bearer()...); ans.StatusCode != 204 {
						t.Errorf("release %s = %d", a.holdID, ans.StatusCode)
					}
				})
			}
		}
		wg.Wait()
		if n := heldSeats(t, ts, event); n != 0 {
			t.Fatalf("round %d: %d seats still held after every winner released", round, n)
		}
	}
}
