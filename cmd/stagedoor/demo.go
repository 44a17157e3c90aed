package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// demo runs the whole demo flow (docs/walkthrough.md) against a running Stagedoor, as a client
// would, printing each request and a short account of its answer:
//
//   - the buyer logs in, lists the events, reads the demo event's seat map,
//     holds two available seats, checks out with tok_visa and an
//     Idempotency-Key, and lists the tickets;
//   - the door scans one of those tickets with the scanner key (admitted), and
//     again (409 already_scanned);
//   - the organizer logs in, lists their events (the seats sold) and reads the
//     scan audit.
//
// It stops at the first answer it did not expect, printing the problem's type
// and detail, and fails. The demo data comes from the environment, else the
// demo environment file that stagedoor seed writes (.env.demo), else seed's
// own accounts; without DEMO_EVENT the event is found by its name, and without
// DEMO_SCANNER_KEY the organizer makes a key for the run and revokes it after.
func demo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, err := demoSettingsFrom(args, getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Stagedoor demo against %s (demo data: %s)\n", s.baseURL, s.source)
	c := &demoClient{base: s.baseURL, out: stdout, http: &http.Client{Timeout: 30 * time.Second}}
	if err := c.flow(ctx, s); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "The whole flow worked.")
	return nil
}

// flow is the demo's steps, in the walkthrough's order.
func (c *demoClient) flow(ctx context.Context, s demoSettings) error {
	// The buyer: log in, find the event and two free seats, hold, pay, list.
	buyer, err := c.login(ctx, "buyer", s.buyerEmail, s.buyerPassword)
	if err != nil {
		return err
	}
	ev, err := c.findEvent(ctx, s.eventID)
	if err != nil {
		return err
	}
	hold, err := c.holdTwoSeats(ctx, buyer, ev.ID)
	if err != nil {
		return err
	}
	order, err := c.checkOut(ctx, buyer, hold.ID)
	if err != nil {
		return err
	}
	if err := c.listTickets(ctx, buyer, order); err != nil {
		return err
	}

	// The door: one ticket, admitted once. Without a scanner key the
	// organizer makes one for this run, and revokes it at the end.
	var organizer string
	key := s.scannerKey
	if key == "" {
		if organizer, err = c.login(ctx, "organizer", s.organizerEmail, s.organizerPassword); err != nil {
			return err
		}
		made, err := c.makeScannerKey(ctx, organizer, ev.ID)
		if err != nil {
			return err
		}
		key = made.Key
		defer c.revokeScannerKey(context.WithoutCancel(ctx), organizer, made.ID) // failed or not
	}
	ticket := order.Tickets[0]
	if err := c.scan(ctx, key, ticket, http.StatusOK); err != nil {
		return err
	}
	if err := c.scan(ctx, key, ticket, http.StatusConflict); err != nil {
		return err
	}

	// The organizer: the seats sold, and the audit of both scans.
	if organizer == "" {
		if organizer, err = c.login(ctx, "organizer", s.organizerEmail, s.organizerPassword); err != nil {
			return err
		}
	}
	if err := c.organizerEvent(ctx, organizer, ev.ID); err != nil {
		return err
	}
	return c.scanAudit(ctx, organizer, ev.ID, ticket.ID)
}

// demoSettings are where demo goes and who it is there.
type demoSettings struct {
	baseURL, source                   string
	buyerEmail, buyerPassword         string
	organizerEmail, organizerPassword string
	eventID, scannerKey               string
}

// demoSettingsFrom reads the flags, then each DEMO_ variable from the
// environment, else the demo environment file, else seed's defaults.
func demoSettingsFrom(args []string, getenv func(string) string, stderr io.Writer) (demoSettings, error) {
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	flags.SetOutput(stderr)
	base := getenv("STAGEDOOR_URL")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	baseURL := flags.String("url", base, "Stagedoor's base URL (default: $STAGEDOOR_URL, else http://127.0.0.1:8080)")
	envFile := flags.String("env-file", envFilePath(getenv), "the demo data stagedoor seed wrote (empty: none)")
	if err := flags.Parse(args); err != nil {
		return demoSettings{}, usageError{fmt.Sprintf("demo: %v", err)}
	}
	if flags.NArg() > 0 {
		return demoSettings{}, usageError{fmt.Sprintf("demo: unexpected %q\nusage: stagedoor demo [-url URL] [-env-file PATH]", flags.Arg(0))}
	}
	if u, err := url.Parse(*baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return demoSettings{}, usageError{fmt.Sprintf("demo: -url %q is not an http:// or https:// URL", *baseURL)}
	}

	file, source := map[string]string{}, "the environment and seed's defaults (no demo environment file)"
	if *envFile != "" {
		read, err := readEnvFile(*envFile)
		switch {
		case err == nil:
			file, source = read, *envFile+" and the environment"
		case !missingFile(err):
			return demoSettings{}, fmt.Errorf("demo: %w", err)
		default:
			source = fmt.Sprintf("the environment and seed's defaults (no %s: run stagedoor seed to write it)", *envFile)
		}
	}
	value := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		if v := file[name]; v != "" {
			return v
		}
		return def
	}
	return demoSettings{
		baseURL:           strings.TrimSuffix(*baseURL, "/"),
		source:            source,
		buyerEmail:        value("DEMO_BUYER_EMAIL", demoBuyerEmail),
		buyerPassword:     value("DEMO_BUYER_PASSWORD", demoPassword),
		organizerEmail:    value("DEMO_ORGANIZER_EMAIL", demoOrganizerEmail),
		organizerPassword: value("DEMO_ORGANIZER_PASSWORD", demoPassword),
		eventID:           value("DEMO_EVENT", ""),
		scannerKey:        value("DEMO_SCANNER_KEY", ""),
	}, nil
}

// login logs who in and returns the session token.
func (c *demoClient) login(ctx context.Context, who, email, password string) (string, error) {
	var in demoLogin
	err := c.do(ctx, demoRequest{who: who, method: "POST", path: "/v1/login", want: http.StatusOK,
		body: map[string]string{"email": email, "password": password}, into: &in,
		summary: func() string { return fmt.Sprintf("logged in as %s (%s)", in.Principal.Email, in.Principal.Kind) }})
	return in.Token, err
}

// findEvent lists the events on sale, a page at a time, until it meets the
// demo event: DEMO_EVENT, else the one named as seed names it.
func (c *demoClient) findEvent(ctx context.Context, eventID string) (demoEvent, error) {
	path := "/v1/events?limit=100"
	for seen := 0; ; {
		var page demoEvents
		var found *demoEvent
		err := c.do(ctx, demoRequest{who: "buyer", method: "GET", path: path, want: http.StatusOK, into: &page,
			summary: func() string {
				seen += len(page.Events)
				for i, e := range page.Events {
					if e.ID == eventID || eventID == "" && e.Name == demoEventName && e.Venue == demoVenue {
						found = &page.Events[i]
						return fmt.Sprintf("%s; the demo event %q: %d of %d seats available",
							count(len(page.Events), "event"), e.Name, e.SeatsAvailable, e.SeatsTotal)
					}
				}
				return count(len(page.Events), "event") + ", not the demo event yet"
			}})
		switch {
		case err != nil:
			return demoEvent{}, err
		case found != nil:
			return *found, nil
		case page.NextAfter == nil:
			if eventID != "" {
				return demoEvent{}, fmt.Errorf("demo: DEMO_EVENT %s is not among the %d events on sale: run stagedoor seed against this Stagedoor's database", eventID, seen)
			}
			return demoEvent{}, fmt.Errorf("demo: no event %q at %q among the %d on sale: run stagedoor seed", demoEventName, demoVenue, seen)
		}
		path = "/v1/events?limit=100&after=" + url.QueryEscape(*page.NextAfter)
	}
}

// holdTwoSeats reads the seat map and holds two available seats. The map is
// a snapshot up to a second old, so seats it shows available may have just
// been taken (by the last run, say): then it reads the map again, a second
// later, up to twice.
func (c *demoClient) holdTwoSeats(ctx context.Context, token, eventID string) (demoHold, error) {
	for attempt := 1; ; attempt++ {
		seats, err := c.twoAvailableSeats(ctx, eventID)
		if err != nil {
			return demoHold{}, err
		}
		h, err := c.holdSeats(ctx, token, eventID, seats)
		var answer *demoAnswerError
		if attempt < 3 && errors.As(err, &answer) && answer.problemType == "/problems/seats-unavailable" {
			fmt.Fprintln(c.out, "          (the seat map may be a second old: reading it again in a second)")
			time.Sleep(1100 * time.Millisecond)
			continue
		}
		return h, err
	}
}

// twoAvailableSeats reads the seat map and picks its first two available seats.
func (c *demoClient) twoAvailableSeats(ctx context.Context, eventID string) ([]demoSeat, error) {
	var m struct {
		Seats []demoSeat `json:"seats"`
	}
	var free []demoSeat
	err := c.do(ctx, demoRequest{who: "buyer", method: "GET", path: "/v1/events/" + eventID + "/seats", want: http.StatusOK, into: &m,
		summary: func() string {
			for _, s := range m.Seats {
				if s.Status == "available" {
					free = append(free, s)
				}
			}
			return fmt.Sprintf("%d seats, %d available", len(m.Seats), len(free))
		}})
	if err != nil {
		return nil, err
	}
	if len(free) < 2 {
		return nil, fmt.Errorf("demo: the demo event has %d seats available, and the demo needs 2", len(free))
	}
	return free[:2], nil
}

// holdSeats holds the seats for the buyer.
func (c *demoClient) holdSeats(ctx context.Context, token, eventID string, seats []demoSeat) (demoHold, error) {
	var h demoHold
	err := c.do(ctx, demoRequest{who: "buyer", method: "POST", path: "/v1/holds", token: token, want: http.StatusCreated,
		body: map[string]any{"event_id": eventID, "seat_ids": []string{seats[0].ID, seats[1].ID}}, into: &h,
		summary: func() string {
			return fmt.Sprintf("%s: %s and %s until %s, %s", h.Status, seatName(seats[0]), seatName(seats[1]),
				h.ExpiresAt.UTC().Format(time.TimeOnly), money(h.TotalCents, h.Currency))
		}})
	return h, err
}

// checkOut pays for the hold with tok_visa, under an Idempotency-Key of its own.
func (c *demoClient) checkOut(ctx context.Context, token, holdID string) (demoOrder, error) {
	var o demoOrder
	err := c.do(ctx, demoRequest{who: "buyer", method: "POST", path: "/v1/orders", token: token, want: http.StatusCreated,
		header: map[string]string{"Idempotency-Key": "demo-" + randomID()},
		body:   map[string]string{"hold_id": holdID, "payment_token": "tok_visa"}, into: &o,
		summary: func() string {
			return fmt.Sprintf("order %s, %d tickets, %s", o.Status, len(o.Tickets), money(o.TotalCents, o.Currency))
		}})
	if err == nil && (o.Status != "confirmed" || len(o.Tickets) != 2) {
		err = fmt.Errorf("demo: the order is %s with %d tickets, want confirmed with 2", o.Status, len(o.Tickets))
	}
	return o, err
}

// listTickets lists the buyer's tickets, which must hold the order's.
func (c *demoClient) listTickets(ctx context.Context, token string, order demoOrder) error {
	var list struct {
		Tickets []demoTicket `json:"tickets"`
	}
	var valid, ours int
	err := c.do(ctx, demoRequest{who: "buyer", method: "GET", path: "/v1/tickets", token: token, want: http.StatusOK, into: &list,
		summary: func() string {
			for _, t := range list.Tickets {
				if t.Status == "valid" {
					valid++
				}
				for _, o := range order.Tickets {
					if t.ID == o.ID {
						ours++
					}
				}
			}
			return fmt.Sprintf("%d tickets (%d valid), this order's %d among them", len(list.Tickets), valid, ours)
		}})
	if err == nil && ours != len(order.Tickets) {
		err = fmt.Errorf("demo: the buyer's tickets hold %d of the order's %d", ours, len(order.Tickets))
	}
	return err
}

// makeScannerKey makes a scanner key bound to the event, for this run.
func (c *demoClient) makeScannerKey(ctx context.Context, token, eventID string) (demoScannerKey, error) {
	var k demoScannerKey
	err := c.do(ctx, demoRequest{who: "organizer", method: "POST", path: "/v1/scanner-keys", token: token, want: http.StatusCreated,
		body: map[string]string{"label": "stagedoor demo", "event_id": eventID}, into: &k,
		summary: func() string { return "no DEMO_SCANNER_KEY: a key for this run, revoked at its end" }})
	return k, err
}

// revokeScannerKey revokes the run's key; a failure is printed, not returned.
func (c *demoClient) revokeScannerKey(ctx context.Context, token, keyID string) {
	_ = c.do(ctx, demoRequest{who: "organizer", method: "DELETE", path: "/v1/scanner-keys/" + keyID, token: token,
		want: http.StatusNoContent, summary: func() string { return "the run's scanner key revoked" }})
}

// scan scans the ticket at the door: want is 200 (admitted) or 409 (already
// scanned: the ticket was admitted before).
func (c *demoClient) scan(ctx context.Context, key string, t demoTicket, want int) error {
	var s demoScan
	err := c.do(ctx, demoRequest{who: "door", method: "POST", path: "/v1/scans", want: want,
		header: map[string]string{"X-Api-Key": key}, body: map[string]string{"code": t.Code}, into: &s,
		summary: func() string {
			if want == http.StatusOK {
				return fmt.Sprintf("%s: %s row %s seat %d", s.Result, s.Seat.Section, s.Seat.Row, s.Seat.Number)
			}
			return fmt.Sprintf("%s, first at %s: one admission a ticket", s.Result, s.FirstScannedAt.UTC().Format(time.RFC3339))
		}})
	wantResult := map[int]string{http.StatusOK: "admitted", http.StatusConflict: "already_scanned"}[want]
	if err == nil && s.Result != wantResult {
		err = fmt.Errorf("demo: the scan's result is %q, want %q", s.Result, wantResult)
	}
	return err
}

// organizerEvent lists the organizer's events: the demo event has sold at
// least this run's two seats.
func (c *demoClient) organizerEvent(ctx context.Context, token, eventID string) error {
	var list demoEvents
	var ev *demoEvent
	err := c.do(ctx, demoRequest{who: "organizer", method: "GET", path: "/v1/organizer/events", token: token, want: http.StatusOK, into: &list,
		summary: func() string {
			for i, e := range list.Events {
				if e.ID == eventID {
					ev = &list.Events[i]
					return fmt.Sprintf("%s; %q: %d seats sold, %d held", count(len(list.Events), "event"), e.Name, e.SeatsSold, e.SeatsHeld)
				}
			}
			return count(len(list.Events), "event") + ", not the demo event"
		}})
	switch {
	case err != nil:
		return err
	case ev == nil:
		return fmt.Errorf("demo: the demo event %s is not the organizer's: are DEMO_ORGANIZER_EMAIL and DEMO_EVENT from one seed?", eventID)
	case ev.SeatsSold < 2:
		return fmt.Errorf("demo: the demo event has %d seats sold, want at least the 2 just bought", ev.SeatsSold)
	}
	return nil
}

// scanAudit reads the event's newest scans: this run's already_scanned, then
// its admission.
func (c *demoClient) scanAudit(ctx context.Context, token, eventID, ticketID string) error {
	var audit struct {
		Scans []demoScanAttempt `json:"scans"`
	}
	err := c.do(ctx, demoRequest{who: "organizer", method: "GET", path: "/v1/events/" + eventID + "/scans?limit=2", token: token,
		want: http.StatusOK, into: &audit,
		summary: func() string {
			var s []string
			for _, a := range audit.Scans {
				s = append(s, a.Result+" "+a.CodePrefix+"…")
			}
			return "newest first: " + strings.Join(s, ", ")
		}})
	if err != nil {
		return err
	}
	ours := func(i int, result string) bool {
		a := audit.Scans[i]
		return a.TicketID != nil && *a.TicketID == ticketID && a.Result == result
	}
	if len(audit.Scans) < 2 || !ours(0, "already_scanned") || !ours(1, "admitted") {
		return fmt.Errorf("demo: the audit's newest scans are not this run's already_scanned and admitted")
	}
	return nil
}

// count is "1 event", "2 events".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seatName(s demoSeat) string { return fmt.Sprintf("%s %s%d", s.Section, s.Row, s.Number) }

func money(cents int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", cents/100, cents%100, currency)
}

// randomID is 128 random bits in hex: an Idempotency-Key of this checkout's own.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
