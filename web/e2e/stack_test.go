package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// stack is one whole Stagedoor for a test: built by app.New as serve builds
// it, on a database and a Redis key space of the test's own, with a Payrail
// stub whose ledger is in the same database, served on a loopback address.
type stack struct {
	URL string // http://127.0.0.1:port, the pages and the API
	App *app.App
}

// startStack starts a stack; env overrides the test settings below
// (bcrypt cost 4, a 10 ms Payrail, signup-address raised for tests).
func startStack(t *testing.T, env map[string]string) *stack {
	t.Helper()
	return startStackWith(t, stackOptions{env: env})
}

// stackOptions are what a test changes of its stack.
type stackOptions struct {
	env            map[string]string
	payrailLatency time.Duration // how long Payrail takes to answer a charge; zero: 10 ms
	loops          app.Loops     // background loops besides the limits' settings watcher
	// wrap, when set, stands between the browser and the stack (a test's
	// faults of the network or of a busy server).
	wrap func(http.Handler) http.Handler
}

func startStackWith(t *testing.T, o stackOptions) *stack {
	t.Helper()
	if o.payrailLatency == 0 {
		o.payrailLatency = 10 * time.Millisecond
	}
	env := o.env
	db := testenv.Postgres(t)
	pay, err := payrail.Open(context.Background(), db, payrail.Config{Latency: o.payrailLatency}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payServer := httptest.NewServer(pay)
	t.Cleanup(payServer.Close)

	settings := map[string]string{
		"REDIS_URL":                      testenv.RedisURL(t),
		"STAGEDOOR_REDIS_PREFIX":         testenv.RedisPrefix(t),
		"PAYRAIL_URL":                    payServer.URL,
		"STAGEDOOR_BCRYPT_COST":          "4",
		"STAGEDOOR_LIMIT_SIGNUP_ADDRESS": "1000/1s", // every account signs up from 127.0.0.1
		"STAGEDOOR_REDIS_TIMEOUT":        "2s",      // a busy machine must not make a limit fail open
	}
	for k, v := range env {
		settings[k] = v
	}
	cfg, err := config.Load(func(k string) string { return settings[k] })
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	a, err := app.New(context.Background(), cfg, logger, app.WithDB(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	t.Cleanup(a.Start(context.Background(), app.SettingsWatcher|o.loops))
	var handler http.Handler = a.Handler
	if o.wrap != nil {
		handler = o.wrap(handler)
	}
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return &stack{URL: server.URL, App: a}
}

// client is an API client with a session token (Authorization: Bearer), for
// what a test does beside the browser: another buyer, a door scanner.
type client struct {
	s       *stack
	token   string
	headers map[string]string
	Email   string
}

var accounts atomic.Int64

// newEmail is an address no other account of the test has.
func newEmail(kind string) string {
	return fmt.Sprintf("%s%d-%d@example.com", kind, accounts.Add(1), time.Now().UnixNano()%1e6)
}

// password is every test account's password.
const password = "correct horse battery"

// signUp makes an account of kind ("buyer" or "organizer") through the API
// and logs it in.
func (s *stack) signUp(t *testing.T, kind string) *client {
	t.Helper()
	email := newEmail(kind)
	anon := &client{s: s}
	anon.must(t, 201, "POST", "/v1/"+kind+"s", map[string]string{"email": email, "password": password, "name": "Test " + kind}, nil)
	return s.logIn(t, email)
}

// logIn logs an account in through the API (a token, not the browser's cookie).
func (s *stack) logIn(t *testing.T, email string) *client {
	t.Helper()
	var session struct{ Token string }
	(&client{s: s}).must(t, 200, "POST", "/v1/login", map[string]string{"email": email, "password": password}, &session)
	return &client{s: s, token: session.Token, Email: email}
}

// scanner is a client that presents a scanner key.
func (s *stack) scanner(key string) *client {
	return &client{s: s, headers: map[string]string{"X-Api-Key": key}}
}

// do sends a request with body as JSON (nil: none) and returns the status and
// the raw answer, decoded into out when out is not nil and the answer is 2xx.
func (c *client) do(t *testing.T, method, path string, body, out any) (int, []byte) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.s.URL+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, raw
}

// must is do, failing the test unless the status is want.
func (c *client) must(t *testing.T, want int, method, path string, body, out any) []byte {
	t.Helper()
	status, raw := c.do(t, method, path, body, out)
	if status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, status, want, raw)
	}
	return raw
}

// seat is a seat of a seat map.
type seat struct {
	ID      string `json:"id"`
	Section string `json:"section"`
	Row     string `json:"row"`
	Number  int    `json:"number"`
	Status  string `json:"status"`
}

// event is an event the organizer made through the API, with its seats.
type event struct {
	ID    string
	Name  string
	Seats []seat
}

// seat finds a seat by section, row and number.
func (e event) seat(t *testing.T, section, row string, number int) seat {
	t.Helper()
	for _, s := range e.Seats {
		if s.Section == section && s.Row == row && s.Number == number {
			return s
		}
	}
	t.Fatalf("no seat %s %s%d", section, row, number)
	return seat{}
}

// createEvent makes an on-sale event of two sections, Stalls (3 rows of 8 at
// 45.00) and Balcony (2 rows of 8 at 25.00), with a waiting room admitting
// admitPerSecond buyers a second when that is not 0.
func (c *client) createEvent(t *testing.T, name string, admitPerSecond int) event {
	t.Helper()
	body := map[string]any{
		"name": name, "venue": "Test Hall", "starts_at": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{
			{"name": "Stalls", "rows": 3, "seats_per_row": 8, "price_cents": 4500},
			{"name": "Balcony", "rows": 2, "seats_per_row": 8, "price_cents": 2500},
		},
	}
	if admitPerSecond > 0 {
		body["waiting_room"] = map[string]int{"admit_per_second": admitPerSecond}
	}
	var created struct{ ID string }
	c.must(t, 201, "POST", "/v1/events", body, &created)
	var seats struct{ Seats []seat }
	c.must(t, 200, "GET", "/v1/events/"+created.ID+"/seats", nil, &seats)
	return event{ID: created.ID, Name: name, Seats: seats.Seats}
}

// hold holds seats of the event for the client and returns the hold's id.
func (c *client) hold(t *testing.T, eventID string, seats ...seat) string {
	t.Helper()
	ids := make([]string, len(seats))
	for i, s := range seats {
		ids[i] = s.ID
	}
	var h struct{ ID string }
	c.must(t, 201, "POST", "/v1/holds", map[string]any{"event_id": eventID, "seat_ids": ids}, &h)
	return h.ID
}

// buy holds the seats and pays with tok_visa; it returns the tickets' codes.
func (c *client) buy(t *testing.T, eventID string, seats ...seat) []string {
	t.Helper()
	holdID := c.hold(t, eventID, seats...)
	var order struct{ Tickets []struct{ Code string } }
	c.do(t, "POST", "/v1/orders", map[string]string{"hold_id": holdID, "payment_token": "tok_visa"}, &order)
	var codes []string
	for _, tk := range order.Tickets {
		codes = append(codes, tk.Code)
	}
	if len(codes) != len(seats) {
		t.Fatalf("bought %d tickets, want %d", len(codes), len(seats))
	}
	return codes
}

// ticketCodes lists the client's tickets' codes.
func (c *client) ticketCodes(t *testing.T) []string {
	t.Helper()
	var list struct{ Tickets []struct{ Code string } }
	c.must(t, 200, "GET", "/v1/tickets", nil, &list)
	var codes []string
	for _, tk := range list.Tickets {
		codes = append(codes, tk.Code)
	}
	return codes
}
