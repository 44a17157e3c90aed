package onsale

import (
	"context"
	"fmt"
	"net/http"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// organizer logs the organizer in through the API, signing the account up
// first when there is none (the first run), and returns its id; the session
// is c's from then on. Logging in first spends no signup-address token on
// the runs after the first.
func organizer(ctx context.Context, c *client, o Options) (string, error) {
	login := func() (answer, error) {
		return c.setupCall(ctx, routeLogin, func(ctx context.Context) (*http.Response, error) {
			return c.api.Login(ctx, apiclient.LoginRequest{Email: openapi_types.Email(o.OrganizerEmail), Password: o.Password})
		})
	}
	a, err := login()
	if err != nil {
		return "", fmt.Errorf("onsale: log the organizer in: %w", err)
	}
	if a.status == http.StatusUnauthorized {
		s, err := c.setupCall(ctx, routeSignup, func(ctx context.Context) (*http.Response, error) {
			return c.api.CreateOrganizer(ctx, apiclient.SignupRequest{
				Email: openapi_types.Email(o.OrganizerEmail), Password: o.Password, Name: "On-sale simulator"})
		})
		if err != nil {
			return "", fmt.Errorf("onsale: sign the organizer up: %w", err)
		}
		if s.status != http.StatusCreated {
			return "", fmt.Errorf("onsale: sign the organizer %s up: %d %s (another password? -organizer-email names another account)",
				o.OrganizerEmail, s.status, s.body)
		}
		if a, err = login(); err != nil {
			return "", fmt.Errorf("onsale: log the organizer in: %w", err)
		}
	}
	if a.status != http.StatusOK {
		return "", fmt.Errorf("onsale: log the organizer %s in: %d %s", o.OrganizerEmail, a.status, a.body)
	}
	var session apiclient.Session
	if err := a.decode(&session); err != nil {
		return "", err
	}
	c.token = session.Token
	return session.Principal.Id.String(), nil
}

// section is a section of the event, as POST /v1/events takes it.
type section struct {
	Name        string `json:"name"`
	Rows        int    `json:"rows"`
	SeatsPerRow int    `json:"seats_per_row"`
	PriceCents  int64  `json:"price_cents"`
}

// sectionNames name the event's sections, in order.
var sectionNames = []string{"Stalls", "Dress Circle", "Upper Circle", "Balcony", "Gallery", "Boxes",
	"Terrace", "Gods", "Loge", "Mezzanine", "Orchestra", "Pit", "Parterre", "Tier A", "Tier B",
	"Tier C", "Tier D", "Tier E", "Tier F", "Tier G"}

// maxSections is the contract's bound on an event's sections.
const maxSections = 20

// sections lays n seats out in rows of 25 (fewer when n is), at most 19
// sections of whole rows and one last row for what is left; later sections
// cost less.
func sections(n int, price int64) []section {
	perRow := min(25, n)
	rows, rest := n/perRow, n%perRow
	perSection := (rows + maxSections - 2) / (maxSections - 1)
	perSection = max(perSection, min(rows, 20))
	var out []section
	for rows > 0 {
		r := min(perSection, rows)
		out = append(out, section{Name: sectionNames[len(out)], Rows: r, SeatsPerRow: perRow,
			PriceCents: max(price-int64(len(out))*price/10, 0)})
		rows -= r
	}
	if rest > 0 {
		out = append(out, section{Name: sectionNames[len(out)], Rows: 1, SeatsPerRow: rest, PriceCents: max(price/2, 0)})
	}
	return out
}

// createEvent makes the sale's event through the API, its sale opening
// o.Lead from now.
func createEvent(ctx context.Context, c *client, o Options) (Sale, error) {
	onSale := time.Now().Add(o.Lead).UTC().Truncate(time.Millisecond)
	body := apiclient.EventRequest{
		Name:     fmt.Sprintf("On-sale simulation %s", onSale.Format("2006-01-02 15:04:05")),
		Venue:    "The Simulated Hall",
		StartsAt: onSale.Add(30 * 24 * time.Hour),
		OnSaleAt: &onSale,
	}
	for _, s := range sections(o.Seats, o.PriceCents) {
		body.Sections = append(body.Sections, apiclient.SeatedSection(s.Name, s.Rows, s.SeatsPerRow, int(s.PriceCents)))
	}
	if o.RoomRate > 0 {
		body.WaitingRoom = &apiclient.WaitingRoom{AdmitPerSecond: int32(o.RoomRate)}
	}
	// A retried creation may make two events (the first answer lost): the
	// sale is the one answered.
	a, err := c.setupCall(ctx, routeCreateEvent, func(ctx context.Context) (*http.Response, error) {
		return c.api.CreateEvent(ctx, body)
	})
	if err != nil {
		return Sale{}, fmt.Errorf("onsale: create the event: %w", err)
	}
	if a.status == http.StatusTooManyRequests && a.problem.Limit == "event-create" {
		return Sale{}, fmt.Errorf("onsale: create the event: the organizer's event-create limit refused it (%s): "+
			"use another -organizer-email, or wait", a.problem.Detail)
	}
	if a.status != http.StatusCreated {
		return Sale{}, fmt.Errorf("onsale: create the event: %d %s", a.status, a.body)
	}
	var ev apiclient.Event
	if err := a.decode(&ev); err != nil {
		return Sale{}, err
	}
	if int(ev.SeatsTotal) != o.Seats {
		return Sale{}, fmt.Errorf("onsale: the event has %d seats, not the %d asked for", ev.SeatsTotal, o.Seats)
	}
	return Sale{URL: c.base, EventID: ev.Id.String(), OrganizerID: ev.OrganizerId.String(), OnSaleAt: ev.OnSaleAt, HasRoom: o.RoomRate > 0}, nil
}

// accounts are the buyers' and the bots' sessions.
type accounts struct {
	buyers, bots, pollers []auth.Session
}

// prepareAccounts makes (or reuses) the buyers' and the bots' accounts with
// one bcrypt hash, straight in the database, and a session for each.
func prepareAccounts(ctx context.Context, o Options) (accounts, error) {
	emails := make([]string, 0, o.Buyers+o.Bots+o.Pollers)
	for i := range o.Buyers {
		emails = append(emails, fmt.Sprintf("%sbuyer-%05d@example.com", o.EmailPrefix, i+1))
	}
	for j := range o.Bots {
		emails = append(emails, fmt.Sprintf("%sbot-%04d@example.com", o.EmailPrefix, j+1))
	}
	for k := range o.Pollers {
		emails = append(emails, fmt.Sprintf("%spoller-%06d@example.com", o.EmailPrefix, k+1))
	}
	sessions, err := auth.NewService(o.DB, o.BcryptCost).PrepareBuyers(ctx, emails, o.Password)
	if err != nil {
		return accounts{}, fmt.Errorf("onsale: prepare the accounts: %w", err)
	}
	return accounts{buyers: sessions[:o.Buyers], bots: sessions[o.Buyers : o.Buyers+o.Bots],
		pollers: sessions[o.Buyers+o.Bots:]}, nil
}
