package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// slowClient sends a request's headers, then its body a byte every half
// second, as an attacker holding a connection open would. It stops sending when
// the server answers, and records the status of that answer.
type slowClient struct {
	conn   net.Conn
	status chan int
	// closed says, after the answer, whether the server closed the connection
	// within 2 s (a cut client must hold nothing, not even its socket).
	closed chan bool
}

func startSlowClient(t *testing.T, ts *testServer, path string, header ...string) *slowClient {
	t.Helper()
	conn, err := net.Dial("tcp", ts.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var h strings.Builder
	fmt.Fprintf(&h, "POST %s HTTP/1.1\r\nHost: stagedoor\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n", path)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&h, "%s: %s\r\n", header[i], header[i+1])
	}
	h.WriteString("\r\n")
	if _, err := conn.Write([]byte(h.String())); err != nil {
		t.Fatal(err)
	}
	c := &slowClient{conn: conn, status: make(chan int, 1), closed: make(chan bool, 1)}
	answered := make(chan struct{})
	go func() { // dribble
		for {
			select {
			case <-answered:
				return
			case <-time.After(500 * time.Millisecond):
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	go func() {
		defer close(answered)
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			c.status <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.status <- resp.StatusCode
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = r.ReadByte()
		var timeout net.Error
		c.closed <- err != nil && !(errors.As(err, &timeout) && timeout.Timeout()) // EOF, or a reset of our dribbling
	}()
	return c
}

// TestSlowBodiesHoldNoCheckoutSlot reproduces the first finding: twenty
// checkouts of one buyer dribbling their bodies used to hold all twenty slots.
// Now they hold none: another buyer checks out meanwhile, and the slow ones are
// cut with 408 when their body deadline passes.
func TestSlowBodiesHoldNoCheckoutSlot(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_BODY_TIMEOUT", "2s")
	mallory, ada := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	slow := make([]*slowClient, 20)
	for i := range slow {
		slow[i] = startSlowClient(t, s.testServer, "/v1/orders", mallory.bearer()...)
	}
	time.Sleep(300 * time.Millisecond) // every slow request is in, dribbling
	holdID := s.hold(t, ada, s.seats[0])
	if a := s.checkout(t, ada, orderBody(holdID, "tok_visa"), "ada"); a.StatusCode != 201 {
		t.Fatalf("another buyer's checkout while 20 bodies dribble = %d %s, want 201", a.StatusCode, a.raw)
	}
	for i, c := range slow {
		select {
		case st := <-c.status:
			if st != 408 {
				t.Errorf("slow checkout %d = %d, want 408", i, st)
			}
			if !<-c.closed {
				t.Errorf("slow checkout %d: the server kept the connection open after its 408", i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("slow checkout %d was not cut", i)
		}
	}
}

// TestSlowBodiesDoNotStarveReads reproduces the second finding: 400 slow
// signups from nobody in particular used to fill the in-flight bound (400 by
// default), and every read answered 503. Now a body is read before the request
// counts as in flight.
func TestSlowBodiesDoNotStarveReads(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_BODY_TIMEOUT": "3s"}, nil, nil)
	if ts.Config.MaxInFlight != 400 {
		t.Fatalf("STAGEDOOR_MAX_IN_FLIGHT defaults to %d; this test sends 400 slow bodies against 400", ts.Config.MaxInFlight)
	}
	var wg sync.WaitGroup
	for range 400 {
		wg.Go(func() { startSlowClient(t, ts, "/v1/buyers") })
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond)
	for i := range 10 {
		if a := ts.request(t, "GET", "/v1/events", ""); a.StatusCode != 200 {
			t.Fatalf("read %d while 400 bodies dribble = %d %s, want 200", i, a.StatusCode, a.raw)
		}
	}
}

// TestRacingHoldsNeverPassTheCap reproduces the third finding: one new account
// held all 97 free seats of an event in 0.03 s with ten holds of ten. Now 100
// holds of one seat each, sent by one buyer at once, leave exactly
// STAGEDOOR_MAX_HELD_SEATS seats held; every other is 409 too-many-seats-held.
// A release makes room again, and another buyer is not affected.
func TestRacingHoldsNeverPassTheCap(t *testing.T) {
	t.Parallel()
	const maxHeld = 10
	ts := newTestServer(t, map[string]string{
		"STAGEDOOR_MAX_HELD_SEATS":       strconv.Itoa(maxHeld),
		"STAGEDOOR_LIMIT_HOLD_BUYER":     "100000/1s",
		"STAGEDOOR_LIMIT_HOLD_ORGANIZER": "100000/1s",
		// The hoarder's racing holds are the point; buyer-concurrency would
		// refuse all but five of them before they reach the cap.
		"STAGEDOOR_LIMIT_BUYER_CONCURRENCY": "1000",
	}, postgresPool(t, 16), nil)
	org, hoarder, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(10, 11))

	statuses := make([]int, 100)
	holds := make([]string, 100)
	atOnce(len(statuses), func(i int) {
		a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), hoarder.bearer()...)
		statuses[i] = a.StatusCode
		switch a.StatusCode {
		case 201:
			holds[i] = as[holdJSON](t, a).ID
		case 409:
			if p := a.problem(t); !p.is("too-many-seats-held") || p.MaxHeldSeats != maxHeld {
				t.Errorf("refused hold: %s, want too-many-seats-held with max_held_seats %d", a.raw, maxHeld)
			}
		default:
			t.Errorf("hold %d = %d %s", i, a.StatusCode, a.raw)
		}
	})
	var won []string
	for i, st := range statuses {
		if st == 201 {
			won = append(won, holds[i])
		}
	}
	var held int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM seats WHERE event_id = $1 AND held_until > now()`, event).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if len(won) != maxHeld || held != maxHeld {
		t.Fatalf("%d holds placed, %d seats held; want exactly the cap, %d", len(won), held, maxHeld)
	}

	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[100:102]...), other.bearer()...); a.StatusCode != 201 {
		t.Errorf("another buyer's hold = %d %s, want 201", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "DELETE", "/v1/holds/"+won[0], "", hoarder.bearer()...); a.StatusCode != 204 {
		t.Fatalf("release = %d", a.StatusCode)
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[105]), hoarder.bearer()...); a.StatusCode != 201 {
		t.Errorf("a hold after a release made room = %d %s, want 201", a.StatusCode, a.raw)
	}
}
