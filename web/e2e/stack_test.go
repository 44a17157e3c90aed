package e2e

import (
	"bytes"
	"cmp"
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

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
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
		// The worker-utilization shedder measures this machine, which Chromium
		// and the other packages' tests load: in shadow, so that it never
		// refuses a page these tests are not about.
		"STAGEDOOR_WORKER_UTILIZATION": "shadow",
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
// what a test does beside the browser: another buyer, a door scanner. Its
// set-up calls go through the generated client; do and must send raw
// requests, for the tests that assert a status or a body.
type client struct {
	s       *stack
	api     *apiclient.ClientWithResponses
	token   string
	headers map[string]string
	Email   string
}

// client is a client of the stack with token (none when empty) and headers.
func (s *stack) client(t *testing.T, token string, headers map[string]string) *client {
	t.Helper()
	c := &client{s: s, token: token, headers: headers}
	c.api = apitest.Client(t, s.URL, apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		c.authorize(req)
		return nil
	}))
	return c
}

// authorize sets the client's credential and headers on req.
func (c *client) authorize(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
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
	return s.signUpAs(t, kind, newEmail(kind))
}

// signUpAs is signUp with this email.
func (s *stack) signUpAs(t *testing.T, kind, email string) *client {
	t.Helper()
	signup := apiclient.SignupRequest{Email: openapi_types.Email(email), Password: password, Name: "Test " + kind}
	anon, ctx := s.client(t, "", nil).api, context.Background()
	var a apiclient.Answer
	var err error
	if kind == "organizer" {
		a, err = anon.CreateOrganizerWithResponse(ctx, signup)
	} else {
		a, err = anon.CreateBuyerWithResponse(ctx, signup)
	}
	apitest.Expect(t, a, err, 201)
	return s.logIn(t, email)
}

// logIn logs an account in through the API (a token, not the browser's cookie).
func (s *stack) logIn(t *testing.T, email string) *client {
	t.Helper()
	a, err := s.client(t, "", nil).api.LoginWithResponse(context.Background(),
		apiclient.LoginRequest{Email: openapi_types.Email(email), Password: password})
	apitest.Expect(t, a, err, 200)
	c := s.client(t, a.JSON200.Token, nil)
	c.Email = email
	return c
}

// scanner is a client that presents a scanner key.
func (s *stack) scanner(t *testing.T, key string) *client {
	return s.client(t, "", map[string]string{"X-Api-Key": key})
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
	c.authorize(req)
	resp, raw := apitest.Send(t, http.DefaultClient, req)
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
	ID      string
	Section string
	Row     string
	Number  int
	Status  string
}

// event is an event the organizer made through the API, with its seats and
// its sections' ids by name.
type event struct {
	ID       string
	Name     string
	Seats    []seat
	Sections map[string]string
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
	return c.createEventOf(t, name, admitPerSecond,
		apiclient.SeatedSection("Stalls", 3, 8, 4500), apiclient.SeatedSection("Balcony", 2, 8, 2500))
}

// createEventOf makes an on-sale event of the sections, with a waiting room
// admitting admitPerSecond buyers a second when that is not 0.
func (c *client) createEventOf(t *testing.T, name string, admitPerSecond int, sections ...apiclient.SectionRequest) event {
	t.Helper()
	body := apiclient.EventRequest{
		Name: name, Venue: "Test Hall", StartsAt: time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second),
		Sections: sections,
	}
	if admitPerSecond > 0 {
		body.WaitingRoom = &apiclient.WaitingRoom{AdmitPerSecond: int32(admitPerSecond)}
	}
	return c.makeEvent(t, body)
}

// makeEvent creates the event of body and reads its seats and the ids of its
// sections by name.
func (c *client) makeEvent(t *testing.T, body apiclient.EventRequest) event {
	t.Helper()
	ctx := context.Background()
	created, err := c.api.CreateEventWithResponse(ctx, body)
	apitest.Expect(t, created, err, 201)
	m, err := c.api.SeatMapWithResponse(ctx, created.JSON201.Id)
	apitest.Expect(t, m, err, 200)
	ev := event{ID: created.JSON201.Id.String(), Name: body.Name, Sections: map[string]string{}}
	for _, s := range m.JSON200.Seats {
		ev.Seats = append(ev.Seats, seat{ID: s.Id.String(), Section: s.Section, Row: s.Row, Number: int(s.Number), Status: string(s.Status)})
	}
	for _, s := range *created.JSON201.Sections {
		ev.Sections[s.Name] = s.Id.String()
	}
	return ev
}

// hold holds seats of the event for the client and returns the hold's id.
func (c *client) hold(t *testing.T, eventID string, seats ...seat) string {
	t.Helper()
	in := apiclient.HoldRequest{EventId: uuid.MustParse(eventID)}
	for _, s := range seats {
		in.SeatIds = append(in.SeatIds, uuid.MustParse(s.ID))
	}
	h, err := c.api.CreateHoldWithResponse(context.Background(), in)
	apitest.Expect(t, h, err, 201)
	return h.JSON201.Id.String()
}

// buy holds the seats and pays with tok_visa; it returns the tickets' codes.
func (c *client) buy(t *testing.T, eventID string, seats ...seat) []string {
	t.Helper()
	holdID := c.hold(t, eventID, seats...)
	o, err := c.api.CheckoutWithResponse(context.Background(), nil,
		apiclient.OrderRequest{HoldId: uuid.MustParse(holdID), PaymentToken: "tok_visa"})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, tk := range cmp.Or(o.JSON201, &apiclient.Order{}).Tickets {
		if tk.Code != nil {
			codes = append(codes, *tk.Code)
		}
	}
	if len(codes) != len(seats) {
		t.Fatalf("bought %d tickets, want %d", len(codes), len(seats))
	}
	return codes
}

// ticketCodes lists the codes of the client's tickets that have one (a
// ticket given away has none).
func (c *client) ticketCodes(t *testing.T) []string {
	t.Helper()
	list, err := c.api.ListTicketsWithResponse(context.Background())
	apitest.Expect(t, list, err, 200)
	var codes []string
	for _, tk := range list.JSON200.Tickets {
		if tk.Code != nil {
			codes = append(codes, *tk.Code)
		}
	}
	return codes
}
