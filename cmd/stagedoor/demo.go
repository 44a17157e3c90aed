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

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/stagedoor/stagedoor/internal/apiclient"
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
	c, err := newDemoClient(s.baseURL, stdout)
	if err != nil {
		return err
	}
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
	hold, err := c.holdTwoSeats(ctx, buyer, ev.Id)
	if err != nil {
		return err
	}
	order, err := c.checkOut(ctx, buyer, hold.Id)
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
		made, err := c.makeScannerKey(ctx, organizer, ev.Id)
		if err != nil {
			return err
		}
		key = made.Key
		defer c.revokeScannerKey(context.WithoutCancel(ctx), organizer, made.Id) // failed or not
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
	if err := c.organizerEvent(ctx, organizer, ev.Id); err != nil {
		return err
	}
	return c.scanAudit(ctx, organizer, ev.Id, ticket.Id)
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
	a, err := c.api.LoginWithResponse(ctx, apiclient.LoginRequest{Email: openapi_types.Email(email), Password: password})
	if err := c.check(who, a, err, http.StatusOK, func() string {
		return fmt.Sprintf("logged in as %s (%s)", a.JSON200.Principal.Email, a.JSON200.Principal.Kind)
	}); err != nil {
		return "", err
	}
	return a.JSON200.Token, nil
}

// findEvent lists the events on sale, a page at a time, until it meets the
// demo event: DEMO_EVENT, else the one named as seed names it.
func (c *demoClient) findEvent(ctx context.Context, eventID string) (apiclient.Event, error) {
	params := &apiclient.ListEventsParams{Limit: new(apiclient.Limit100(100))}
	for seen := 0; ; {
		a, err := c.api.ListEventsWithResponse(ctx, params)
		var found *apiclient.Event
		err = c.check("buyer", a, err, http.StatusOK, func() string {
			page := a.JSON200.Events
			seen += len(page)
			for i, e := range page {
				if e.Id.String() == eventID || eventID == "" && e.Name == demoEventName && e.Venue == demoVenue {
					found = &page[i]
					return fmt.Sprintf("%s; the demo event %q: %d of %d seats available",
						count(len(page), "event"), e.Name, e.SeatsAvailable, e.SeatsTotal)
				}
			}
			return count(len(page), "event") + ", not the demo event yet"
		})
		switch {
		case err != nil:
			return apiclient.Event{}, err
		case found != nil:
			return *found, nil
		case a.JSON200.NextAfter == nil:
			if eventID != "" {
				return apiclient.Event{}, fmt.Errorf("demo: DEMO_EVENT %s is not among the %d events on sale: run stagedoor seed against this Stagedoor's database", eventID, seen)
			}
			return apiclient.Event{}, fmt.Errorf("demo: no event %q at %q among the %d on sale: run stagedoor seed", demoEventName, demoVenue, seen)
		}
		params.After = a.JSON200.NextAfter
	}
}

// holdTwoSeats reads the seat map and holds two available seats. The map is
// a snapshot up to a second old, so seats it shows available may have just
// been taken (by the last run, say): then it reads the map again, a second
// later, up to twice.
func (c *demoClient) holdTwoSeats(ctx context.Context, token string, eventID apiclient.ID) (apiclient.Hold, error) {
	for attempt := 1; ; attempt++ {
		seats, err := c.twoAvailableSeats(ctx, eventID)
		if err != nil {
			return apiclient.Hold{}, err
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
func (c *demoClient) twoAvailableSeats(ctx context.Context, eventID apiclient.ID) ([]apiclient.Seat, error) {
	a, err := c.api.SeatMapWithResponse(ctx, eventID)
	var free []apiclient.Seat
	err = c.check("buyer", a, err, http.StatusOK, func() string {
		for _, s := range a.JSON200.Seats {
			if s.Status == apiclient.SeatStatusAvailable {
				free = append(free, s)
			}
		}
		return fmt.Sprintf("%d seats, %d available", len(a.JSON200.Seats), len(free))
	})
	if err != nil {
		return nil, err
	}
	if len(free) < 2 {
		return nil, fmt.Errorf("demo: the demo event has %d seats available, and the demo needs 2", len(free))
	}
	return free[:2], nil
}

// holdSeats holds the seats for the buyer.
func (c *demoClient) holdSeats(ctx context.Context, token string, eventID apiclient.ID, seats []apiclient.Seat) (apiclient.Hold, error) {
	a, err := c.api.CreateHoldWithResponse(ctx, apiclient.HoldRequest{EventId: eventID, SeatIds: []apiclient.ID{seats[0].Id, seats[1].Id}}, apiclient.Bearer(token))
	if err := c.check("buyer", a, err, http.StatusCreated, func() string {
		h := a.JSON201
		return fmt.Sprintf("%s: %s and %s until %s, %s", h.Status, seatName(seats[0]), seatName(seats[1]),
			h.ExpiresAt.UTC().Format(time.TimeOnly), money(int64(h.TotalCents), h.Currency))
	}); err != nil {
		return apiclient.Hold{}, err
	}
	return *a.JSON201, nil
}

// checkOut pays for the hold with tok_visa, under an Idempotency-Key of its own.
func (c *demoClient) checkOut(ctx context.Context, token string, holdID apiclient.ID) (apiclient.Order, error) {
	key := "demo-" + randomID()
	a, err := c.api.CheckoutWithResponse(ctx, &apiclient.CheckoutParams{IdempotencyKey: &key},
		apiclient.OrderRequest{HoldId: holdID, PaymentToken: "tok_visa"}, apiclient.Bearer(token))
	if err := c.check("buyer", a, err, http.StatusCreated, func() string {
		o := a.JSON201
		return fmt.Sprintf("order %s, %d tickets, %s", o.Status, len(o.Tickets), money(int64(o.TotalCents), o.Currency))
	}); err != nil {
		return apiclient.Order{}, err
	}
	o := *a.JSON201
	if o.Status != apiclient.OrderStatusConfirmed || len(o.Tickets) != 2 {
		return o, fmt.Errorf("demo: the order is %s with %d tickets, want confirmed with 2", o.Status, len(o.Tickets))
	}
	return o, nil
}

// listTickets lists the buyer's tickets, which must hold the order's.
func (c *demoClient) listTickets(ctx context.Context, token string, order apiclient.Order) error {
	a, err := c.api.ListTicketsWithResponse(ctx, apiclient.Bearer(token))
	var valid, ours int
	err = c.check("buyer", a, err, http.StatusOK, func() string {
		for _, t := range a.JSON200.Tickets {
			if t.Status == apiclient.TicketStatusValid {
				valid++
			}
			for _, o := range order.Tickets {
				if t.Id == o.Id {
					ours++
				}
			}
		}
		return fmt.Sprintf("%d tickets (%d valid), this order's %d among them", len(a.JSON200.Tickets), valid, ours)
	})
	if err == nil && ours != len(order.Tickets) {
		err = fmt.Errorf("demo: the buyer's tickets hold %d of the order's %d", ours, len(order.Tickets))
	}
	return err
}

// makeScannerKey makes a scanner key bound to the event, for this run.
func (c *demoClient) makeScannerKey(ctx context.Context, token string, eventID apiclient.ID) (apiclient.NewScannerKey, error) {
	a, err := c.api.CreateScannerKeyWithResponse(ctx, apiclient.ScannerKeyRequest{Label: "stagedoor demo", EventId: new(eventID.String())}, apiclient.Bearer(token))
	if err := c.check("organizer", a, err, http.StatusCreated, func() string {
		return "no DEMO_SCANNER_KEY: a key for this run, revoked at its end"
	}); err != nil {
		return apiclient.NewScannerKey{}, err
	}
	return *a.JSON201, nil
}

// revokeScannerKey revokes the run's key; a failure is printed, not returned.
func (c *demoClient) revokeScannerKey(ctx context.Context, token string, keyID apiclient.ID) {
	a, err := c.api.RevokeScannerKeyWithResponse(ctx, keyID, apiclient.Bearer(token))
	_ = c.check("organizer", a, err, http.StatusNoContent, func() string { return "the run's scanner key revoked" })
}

// scan scans the ticket at the door: want is 200 (admitted) or 409 (already
// scanned: the ticket was admitted before).
func (c *demoClient) scan(ctx context.Context, key string, t apiclient.Ticket, want int) error {
	if t.Code == nil {
		return fmt.Errorf("door: ticket %s has no code", t.Id)
	}
	a, err := c.api.ScanWithResponse(ctx, apiclient.ScanRequest{Code: *t.Code}, apiclient.Header("X-Api-Key", key))
	var result string
	err = c.check("door", a, err, want, func() string {
		if want == http.StatusOK {
			s := a.JSON200
			result = fmt.Sprint(s.Result)
			return fmt.Sprintf("%s: %s row %s seat %d", result, s.Seat.Section, s.Seat.Row, s.Seat.Number)
		}
		p := a.ApplicationproblemJSON409
		if p == nil || p.Result == nil || p.FirstScannedAt == nil {
			return "not a scan-rejected problem"
		}
		result = string(*p.Result)
		return fmt.Sprintf("%s, first at %s: one admission a ticket", result, p.FirstScannedAt.UTC().Format(time.RFC3339))
	})
	wantResult := map[int]string{http.StatusOK: "admitted", http.StatusConflict: "already_scanned"}[want]
	if err == nil && result != wantResult {
		err = fmt.Errorf("demo: the scan's result is %q, want %q", result, wantResult)
	}
	return err
}

// organizerEvent lists the organizer's events: the demo event has sold at
// least this run's two seats.
func (c *demoClient) organizerEvent(ctx context.Context, token string, eventID apiclient.ID) error {
	a, err := c.api.OrganizerEventsWithResponse(ctx, apiclient.Bearer(token))
	var ev *apiclient.OrganizerEvent
	err = c.check("organizer", a, err, http.StatusOK, func() string {
		list := a.JSON200.Events
		for i, e := range list {
			if e.Id == eventID {
				ev = &list[i]
				return fmt.Sprintf("%s; %q: %d seats sold, %d held", count(len(list), "event"), e.Name, e.SeatsSold, e.SeatsHeld)
			}
		}
		return count(len(list), "event") + ", not the demo event"
	})
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
func (c *demoClient) scanAudit(ctx context.Context, token string, eventID, ticketID apiclient.ID) error {
	a, err := c.api.ListScansWithResponse(ctx, eventID, &apiclient.ListScansParams{Limit: new(int32(2))}, apiclient.Bearer(token))
	if err := c.check("organizer", a, err, http.StatusOK, func() string {
		var s []string
		for _, scan := range a.JSON200.Scans {
			s = append(s, string(scan.Result)+" "+scan.CodePrefix+"…")
		}
		return "newest first: " + strings.Join(s, ", ")
	}); err != nil {
		return err
	}
	scans := a.JSON200.Scans
	ours := func(i int, result apiclient.ScanResult) bool {
		return scans[i].TicketId != nil && *scans[i].TicketId == ticketID && scans[i].Result == result
	}
	if len(scans) < 2 || !ours(0, apiclient.ScanResultAlreadyScanned) || !ours(1, apiclient.ScanResultAdmitted) {
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

func seatName(s apiclient.Seat) string { return fmt.Sprintf("%s %s%d", s.Section, s.Row, s.Number) }

func money(cents int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", cents/100, cents%100, currency)
}

// randomID is 128 random bits in hex: an Idempotency-Key of this checkout's own.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
