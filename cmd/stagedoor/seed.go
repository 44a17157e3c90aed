package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
)

// The demo data of stagedoor seed. Its password is public (printed, and in
// .env.demo): seed is for demos and development, never for a production database.
const (
	demoOrganizerEmail = "demo-organizer@example.com"
	demoBuyerEmail     = "demo-buyer@example.com"
	demoPassword       = "stagedoor-demo"
	demoEventName      = "Stagedoor Demo Night"
	demoVenue          = "Demo Hall"
	demoKeyLabel       = "Demo gate"
)

// demoSections are the demo event's 300 seats and 200 places of general
// admission.
var demoSections = []event.Section{
	{Name: "Stalls", Rows: 10, SeatsPerRow: 20, PriceCents: 4500},
	{Name: "Balcony", Rows: 5, SeatsPerRow: 20, PriceCents: 2500},
	{Name: "Standing", GeneralAdmission: true, Capacity: 200, PriceCents: 2000},
}

// seed applies pending migrations (unless STAGEDOOR_AUTO_MIGRATE=false), makes
// the demo organizer, buyer, on-sale event and scanner key unless they exist,
// and prints them to stdout as shell assignments, which it also writes to the
// demo environment file (.env.demo; -env-file or STAGEDOOR_DEMO_ENV_FILE
// change the path, -env-file= writes none). ". ./.env.demo" sets them in bash
// or zsh, and stagedoor demo reads them. With STAGEDOOR_ADMIN_TOKEN set, seed
// records it there too (make run does this).
//
// Running it again creates nothing again: it prints what exists. The scanner
// key is stored only as a hash, so it is shown when it is made and, later,
// only if the environment file still holds it; with the demo key revoked, the
// next run makes a new one.
//
// Two seeds running at once on one database may both create the demo event: run
// one at a time (docker-compose.yml and make run-local do).
func seed(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("seed", flag.ContinueOnError)
	flags.SetOutput(stderr)
	envFile := flags.String("env-file", envFilePath(getenv), "write the assignments to this file too (empty: no file)")
	if err := flags.Parse(args); err != nil {
		return usageError{fmt.Sprintf("seed: %v", err)}
	}
	if flags.NArg() > 0 {
		return usageError{fmt.Sprintf("seed: unexpected %q\nusage: stagedoor seed [-env-file PATH]", flags.Arg(0))}
	}

	if cfg.AutoMigrate {
		if err := migrate(ctx, cfg, logger); err != nil {
			return err
		}
	}
	db, err := openDatabase(ctx, cfg, 2)
	if err != nil {
		return err
	}
	defer db.Close()
	events := event.NewService(db, hold.CreateSeats)
	accounts := auth.NewService(db, cfg.BcryptCost).WithEvents(events)

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
	kept, prevAdminToken := "", ""
	if *envFile != "" {
		prev := readPreviousEnvFile(*envFile, logger)
		prevAdminToken = prev["STAGEDOOR_ADMIN_TOKEN"]
		if fresh == "" {
			kept = keptScannerKey(ctx, accounts, prev["DEMO_SCANNER_KEY"], key.ID)
		}
		if fresh == "" && kept == "" {
			// The live key's secret is lost (only its hash is stored): a demo
			// without a key to scan with is no demo, so replace it.
			if key, fresh, err = replaceScannerKey(ctx, accounts, org.ID, ev.ID, key.ID); err != nil {
				return err
			}
			created = append(created, "scanner key (the old one's secret was not in "+*envFile+")")
		}
	}

	if len(created) == 0 {
		created = []string{"nothing (it all existed)"}
	}
	var out shellLines
	out.comment("Stagedoor demo data. Created now: %s.", strings.Join(created, ", "))
	out.comment("The password is public: for demos and development only.")
	out.set("DEMO_ORGANIZER_EMAIL", demoOrganizerEmail)
	out.set("DEMO_ORGANIZER_PASSWORD", demoPassword)
	out.set("DEMO_BUYER_EMAIL", demoBuyerEmail)
	out.set("DEMO_BUYER_PASSWORD", demoPassword)
	out.comment("%q at %q, starts %s, %d seats, on sale since %s", ev.Name, ev.Venue,
		ev.StartsAt.UTC().Format(time.RFC3339), ev.SeatsTotal, ev.OnSaleAt.UTC().Format(time.RFC3339))
	out.set("DEMO_EVENT", ev.ID)
	out.comment("%q, bound to the demo event", key.Label)
	out.set("DEMO_SCANNER_KEY_ID", key.ID)
	switch {
	case fresh != "":
		out.comment("The key, shown this once: only its SHA-256 is stored.")
		out.set("DEMO_SCANNER_KEY", fresh)
	case kept != "":
		out.comment("The key made %s, kept from %s: only its SHA-256 is stored.", key.CreatedAt.UTC().Format(time.RFC3339), *envFile)
		out.set("DEMO_SCANNER_KEY", kept)
	default:
		out.comment("DEMO_SCANNER_KEY was printed when the key was made, %s, and is stored only as a hash.",
			key.CreatedAt.UTC().Format(time.RFC3339))
		out.comment("For a new one: revoke it (DELETE /v1/scanner-keys/%s as the demo organizer) and run stagedoor seed again.", key.ID)
	}
	switch {
	case cfg.AdminToken != "":
		out.comment("The admin API's bearer token (STAGEDOOR_ADMIN_TOKEN, from the environment seed ran in).")
		out.set("STAGEDOOR_ADMIN_TOKEN", cfg.AdminToken)
	case prevAdminToken != "":
		out.comment("The admin API's bearer token, kept from %s (make run gives it to Stagedoor).", *envFile)
		out.set("STAGEDOOR_ADMIN_TOKEN", prevAdminToken)
	}

	// The assignments first: a key just made is shown even if the file fails.
	fmt.Fprint(stdout, out.String())
	if *envFile == "" {
		return nil
	}
	if err := writeEnvFile(*envFile, out.String()); err != nil {
		return fmt.Errorf("seed: %w (the data is made; the lines above are all there is)", err)
	}
	fmt.Fprintf(stdout, "# Written to %s too: load it with . %s\n", *envFile, sourcePath(*envFile))
	return nil
}

// readPreviousEnvFile reads the demo environment file seed wrote last time; a
// file that is missing or does not parse reads as empty.
func readPreviousEnvFile(path string, logger *slog.Logger) map[string]string {
	prev, err := readEnvFile(path)
	if err != nil {
		if !missingFile(err) {
			logger.Warn("seed: the old demo environment file does not parse; nothing of it is kept", "error", err)
		}
		return map[string]string{}
	}
	return prev
}

// keptScannerKey is key when it is still the live demo key keyID, else "".
func keptScannerKey(ctx context.Context, accounts *auth.Service, key, keyID string) string {
	if key == "" {
		return ""
	}
	p, err := accounts.AuthenticateScannerKey(ctx, key)
	if err != nil || p.ScannerKeyID != keyID {
		return ""
	}
	return key
}

// replaceScannerKey revokes the demo key oldID and makes a new one.
func replaceScannerKey(ctx context.Context, accounts *auth.Service, organizerID, eventID, oldID string) (auth.ScannerKey, string, error) {
	if err := accounts.RevokeScannerKey(ctx, organizerID, oldID); err != nil {
		return auth.ScannerKey{}, "", fmt.Errorf("seed: revoke the demo scanner key whose secret is lost: %w", err)
	}
	return ensureScannerKey(ctx, accounts, organizerID, eventID)
}

// sourcePath is path as the argument of ".": a bare name is looked up on PATH
// by some shells, so it gets ./ in front; quoted only when it must be.
func sourcePath(path string) string {
	if !strings.ContainsRune(path, '/') {
		path = "./" + path
	}
	if strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-") != "" {
		return shellQuote(path)
	}
	return path
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
