package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/event"
)

// The demo data of stagedoor seed. Its password is public (printed, and in the
// README): seed is for demos and development, never for a production database.
const (
	demoOrganizerEmail = "demo-organizer@example.com"
	demoBuyerEmail     = "demo-buyer@example.com"
	demoPassword       = "stagedoor-demo"
	demoEventName      = "Stagedoor Demo Night"
	demoVenue          = "Demo Hall"
	demoKeyLabel       = "Demo gate"
)

// demoSections are the demo event's 300 seats.
var demoSections = []event.Section{
	{Name: "Stalls", Rows: 10, SeatsPerRow: 20, PriceCents: 4500},
	{Name: "Balcony", Rows: 5, SeatsPerRow: 20, PriceCents: 2500},
}

// seed applies pending migrations (unless STAGEDOOR_AUTO_MIGRATE=false), makes
// the demo organizer, buyer, on-sale event and scanner key unless they exist,
// and prints them to stdout as shell assignments (eval "$(stagedoor seed)" sets
// them). Running it again creates nothing again: it prints what exists, except
// the scanner key, which was shown once, at its creation, and is stored only as
// a hash. With the demo key revoked, the next run makes a new one.
//
// Two seeds running at once on one database may both create the demo event: run
// one at a time (docker-compose.yml and make run-local do).
func seed(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer) error {
	if cfg.AutoMigrate {
		if err := migrate(ctx, cfg, logger); err != nil {
			return err
		}
	}
	db, err := conn.Postgres(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer db.Close()
	accounts := auth.NewService(db, cfg.BcryptCost)
	events := event.NewService(db)

	var created []string
	org, isNew, err := ensureAccount(ctx, accounts, auth.Organizer, demoOrganizerEmail, "Demo Organizer")
	if err != nil {
		return err
	}
	if isNew {
		created = append(created, "organizer")
	}
	if _, isNew, err = ensureAccount(ctx, accounts, auth.Buyer, demoBuyerEmail, "Demo Buyer"); err != nil {
		return err
	}
	if isNew {
		created = append(created, "buyer")
	}
	ev, isNew, err := ensureEvent(ctx, events, org.ID)
	if err != nil {
		return err
	}
	if isNew {
		created = append(created, "event")
	}
	key, fresh, err := ensureScannerKey(ctx, accounts, org.ID, ev.ID)
	if err != nil {
		return err
	}
	if fresh != "" {
		created = append(created, "scanner key")
	}

	if len(created) == 0 {
		created = []string{"nothing (it all existed)"}
	}
	fmt.Fprintf(stdout, "# Stagedoor demo data. Created now: %s.\n", strings.Join(created, ", "))
	fmt.Fprintf(stdout, "# The password is public: for demos and development only.\n")
	fmt.Fprintf(stdout, "DEMO_ORGANIZER_EMAIL=%s\nDEMO_ORGANIZER_PASSWORD=%s\n", demoOrganizerEmail, demoPassword)
	fmt.Fprintf(stdout, "DEMO_BUYER_EMAIL=%s\nDEMO_BUYER_PASSWORD=%s\n", demoBuyerEmail, demoPassword)
	fmt.Fprintf(stdout, "DEMO_EVENT=%s  # %q at %s, starts %s, %d seats, on sale since %s\n", ev.ID, ev.Name, ev.Venue,
		ev.StartsAt.UTC().Format(time.RFC3339), ev.SeatsTotal, ev.OnSaleAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(stdout, "DEMO_SCANNER_KEY_ID=%s  # %q, bound to the demo event\n", key.ID, key.Label)
	if fresh != "" {
		fmt.Fprintf(stdout, "DEMO_SCANNER_KEY=%s  # shown this once: only its SHA-256 is stored\n", fresh)
	} else {
		fmt.Fprintf(stdout, "# DEMO_SCANNER_KEY was printed when the key was made, %s, and is stored only as a hash.\n"+
			"# For a new one: revoke it (DELETE /v1/scanner-keys/%s as the demo organizer) and run stagedoor seed again.\n",
			key.CreatedAt.UTC().Format(time.RFC3339), key.ID)
	}
	return nil
}

// ensureAccount registers the demo account, or finds it when its email is taken.
func ensureAccount(ctx context.Context, accounts *auth.Service, kind auth.Kind, email, name string) (auth.Account, bool, error) {
	a, err := accounts.Register(ctx, kind, email, demoPassword, name)
	if err == nil {
		return a, true, nil
	}
	if !errors.Is(err, auth.ErrEmailTaken) {
		return auth.Account{}, false, fmt.Errorf("seed: %s: %w", email, err)
	}
	if a, err = accounts.AccountByEmail(ctx, email); err != nil {
		return auth.Account{}, false, fmt.Errorf("seed: %w", err)
	}
	if a.Kind != kind {
		return auth.Account{}, false, fmt.Errorf("seed: %s exists, but is a %s account, not a %s", email, a.Kind, kind)
	}
	return a, false, nil
}

// ensureEvent finds the organizer's demo event by its name, or creates it: on
// sale at once, starting in 30 days.
func ensureEvent(ctx context.Context, events *event.Service, organizerID string) (event.Event, bool, error) {
	own, err := events.ListByOrganizer(ctx, organizerID)
	if err != nil {
		return event.Event{}, false, fmt.Errorf("seed: %w", err)
	}
	for _, e := range own {
		if e.Name == demoEventName {
			return e, false, nil
		}
	}
	e, err := events.Create(ctx, event.Draft{
		OrganizerID: organizerID,
		Name:        demoEventName,
		Venue:       demoVenue,
		StartsAt:    time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Hour),
		Sections:    demoSections,
	})
	if err != nil {
		return event.Event{}, false, fmt.Errorf("seed: create the demo event: %w", err)
	}
	return e, true, nil
}

// ensureScannerKey finds the organizer's live demo key, or makes one bound to
// the event; fresh is the new key, empty when the key existed.
func ensureScannerKey(ctx context.Context, accounts *auth.Service, organizerID, eventID string) (k auth.ScannerKey, fresh string, err error) {
	keys, err := accounts.ScannerKeys(ctx, organizerID)
	if err != nil {
		return auth.ScannerKey{}, "", fmt.Errorf("seed: %w", err)
	}
	for _, k := range keys {
		if k.Label == demoKeyLabel && k.EventID == eventID && k.RevokedAt == nil {
			return k, "", nil
		}
	}
	made, err := accounts.CreateScannerKey(ctx, organizerID, demoKeyLabel, eventID)
	if err != nil {
		return auth.ScannerKey{}, "", fmt.Errorf("seed: create the demo scanner key: %w", err)
	}
	return made.ScannerKey, made.Key, nil
}
