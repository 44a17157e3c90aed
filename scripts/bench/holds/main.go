// Command holds is a black-box load of holds against any Stagedoor, through its
// HTTP API alone, so that two builds (this one and an older one, say) can be
// measured with the same harness and the same settings:
//
//	go run ./scripts/bench/holds -url http://127.0.0.1:8080 -buyers 100 -seats 10000 -holds 20000
//
// It signs up an organizer and -buyers buyers, logs each in, creates one event
// of -seats seats on sale now, and then has every buyer hold 2 random seats
// again and again, releasing her previous hold after each one placed (as
// BenchmarkHolds does: about 2 seats of each buyer held at any moment, the
// event never sold out), until -holds holds are placed. It prints the holds
// placed a second over the play, the share refused (409: a seat taken), and
// the latency of a hold. Run the server with its limits out of the way: the
// hold limits, login-address and login-email (and signup-address, where it
// exists) high, as scripts/bench/holds.sh does.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the Stagedoor to load")
	buyers := flag.Int("buyers", 100, "buyers holding at once")
	seats := flag.Int("seats", 10000, "seats of the event (100 a row)")
	holds := flag.Int("holds", 20000, "holds to place")
	flag.Parse()
	if err := run(*url, *buyers, *seats, *holds); err != nil {
		fmt.Fprintln(os.Stderr, "holds:", err)
		os.Exit(1)
	}
}

type client struct {
	base string
	http *http.Client
}

// call sends one request and decodes a JSON answer into out (when not nil); it
// returns the status.
func (c client) call(method, path, token string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	if resp.StatusCode >= 500 || resp.StatusCode == 401 {
		return resp.StatusCode, fmt.Errorf("%s %s = %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

// account signs up an account of kind ("buyers" or "organizers") and logs it
// in; it returns the session token.
func (c client) account(kind string) (string, error) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	email := "bench-" + hex.EncodeToString(id[:]) + "@example.com"
	cred := map[string]string{"email": email, "password": "bench-password-1234", "name": "Bench"}
	if st, err := c.call("POST", "/v1/"+kind, "", cred, nil); err != nil || st != 201 {
		return "", fmt.Errorf("sign up: %d %v", st, err)
	}
	var session struct{ Token string }
	if st, err := c.call("POST", "/v1/login", "", map[string]string{"email": email, "password": cred["password"]}, &session); err != nil || st != 200 {
		return "", fmt.Errorf("log in: %d %v", st, err)
	}
	return session.Token, nil
}

func run(base string, nBuyers, nSeats, nHolds int) error {
	c := client{base: base, http: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 2 * nBuyers, MaxIdleConnsPerHost: 2 * nBuyers}}}
	org, err := c.account("organizers")
	if err != nil {
		return err
	}
	now := time.Now()
	ev := map[string]any{"name": "Bench night", "venue": "Hall", "currency": "USD",
		"starts_at": now.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339), "on_sale_at": now.Add(-time.Minute).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"name": "Floor", "rows": nSeats / 100, "seats_per_row": 100, "price_cents": 4500}}}
	var event struct{ ID string }
	if st, err := c.call("POST", "/v1/events", org, ev, &event); err != nil || st != 201 {
		return fmt.Errorf("create event: %d %v", st, err)
	}
	var seatMap struct{ Seats []struct{ ID string } }
	if _, err := c.call("GET", "/v1/events/"+event.ID+"/seats", "", nil, &seatMap); err != nil {
		return err
	}
	seats := make([]string, len(seatMap.Seats))
	for i, s := range seatMap.Seats {
		seats[i] = s.ID
	}
	if len(seats) != nSeats {
		return fmt.Errorf("the event has %d seats, want %d", len(seats), nSeats)
	}
	tokens := make([]string, nBuyers)
	errs := make([]error, nBuyers)
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() { tokens[i], errs[i] = c.account("buyers") })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}

	var placed, refused, limited atomic.Int64
	var failed atomic.Value
	lat := make([][]time.Duration, nBuyers)
	start := time.Now()
	for b := range nBuyers {
		wg.Go(func() {
			last := ""
			for placed.Load() < int64(nHolds) && failed.Load() == nil {
				i, j := mrand.IntN(len(seats)), mrand.IntN(len(seats)-1)
				if j >= i {
					j++
				}
				var h struct{ ID string }
				t0 := time.Now()
				st, err := c.call("POST", "/v1/holds", tokens[b], map[string]any{"event_id": event.ID, "seat_ids": []string{seats[i], seats[j]}}, &h)
				lat[b] = append(lat[b], time.Since(t0))
				switch {
				case err != nil:
					failed.Store(err)
					return
				case st == 409:
					refused.Add(1)
					continue
				case st == 429: // a limit the server was not told to lift (buyer-concurrency): counted
					limited.Add(1)
					continue
				case st != 201:
					failed.Store(fmt.Errorf("hold = %d", st))
					return
				}
				placed.Add(1)
				if last != "" {
					if st, err := c.call("DELETE", "/v1/holds/"+last, tokens[b], nil, nil); err != nil || st != 204 {
						failed.Store(fmt.Errorf("release = %d %v", st, err))
						return
					}
				}
				last = h.ID
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	q := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	fmt.Printf("holds/s %.0f placed %d refused %.1f%% limited %d seconds %.2f hold p50 %s p99 %s buyers %d seats %d\n",
		float64(placed.Load())/elapsed.Seconds(), placed.Load(),
		100*float64(refused.Load())/float64(placed.Load()+refused.Load()), limited.Load(), elapsed.Seconds(),
		q(0.5).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), nBuyers, nSeats)
	return nil
}
