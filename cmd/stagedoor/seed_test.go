package main

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// seedOutput runs stagedoor seed and returns its assignments (comments cut).
func seedOutput(t *testing.T, env map[string]string) (map[string]string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"seed"}, func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
		t.Fatalf("stagedoor seed: %v\n%s", err, stderr.String())
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "  #")
		if name, value, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			vars[name] = value
		}
	}
	return vars, stdout.String()
}

// TestSeedTwiceCreatesNothingTwice: seed on an empty database migrates it and
// makes the demo data, whose printed credentials work; seeding again creates
// nothing and prints the same ids, without the key (stored only as a hash).
func TestSeedTwiceCreatesNothingTwice(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["DATABASE_URL"] = testenv.EmptyDatabaseURL(t) // seed applies the migrations first
	first, out := seedOutput(t, env)
	key := first["DEMO_SCANNER_KEY"]
	if first["DEMO_EVENT"] == "" || first["DEMO_SCANNER_KEY_ID"] == "" || !strings.HasPrefix(key, "sdk_") ||
		first["DEMO_BUYER_EMAIL"] != demoBuyerEmail || first["DEMO_ORGANIZER_PASSWORD"] != demoPassword ||
		!strings.Contains(out, "Created now: organizer, buyer, event, scanner key.") {
		t.Fatalf("first seed printed:\n%s", out)
	}

	db, err := pgxpool.New(context.Background(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	accounts := auth.NewService(db, 4)
	for _, who := range []string{"DEMO_ORGANIZER", "DEMO_BUYER"} {
		email := first[who+"_EMAIL"]
		if _, err := accounts.Login(context.Background(), email, first[who+"_PASSWORD"], ""); err != nil {
			t.Errorf("log in as %s with the printed password: %v", email, err)
		}
	}
	p, err := accounts.AuthenticateScannerKey(context.Background(), key)
	if err != nil || p.ScannerKeyID != first["DEMO_SCANNER_KEY_ID"] || p.EventID != first["DEMO_EVENT"] {
		t.Errorf("the printed scanner key authenticates as %+v (%v)", p, err)
	}

	second, out := seedOutput(t, env)
	if _, shown := second["DEMO_SCANNER_KEY"]; shown || second["DEMO_EVENT"] != first["DEMO_EVENT"] ||
		second["DEMO_SCANNER_KEY_ID"] != first["DEMO_SCANNER_KEY_ID"] ||
		!strings.Contains(out, "Created now: nothing") || !strings.Contains(out, "stored only as a hash") {
		t.Errorf("second seed printed:\n%s", out)
	}
	var accountsN, eventsN, seatsN, keysN int
	if err := db.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM accounts), (SELECT count(*) FROM events),
		       (SELECT count(*) FROM seats), (SELECT count(*) FROM scanner_keys)`).
		Scan(&accountsN, &eventsN, &seatsN, &keysN); err != nil {
		t.Fatal(err)
	}
	if accountsN != 2 || eventsN != 1 || seatsN != 300 || keysN != 1 {
		t.Errorf("after two seeds: %d accounts, %d events, %d seats, %d scanner keys; want 2, 1, 300, 1",
			accountsN, eventsN, seatsN, keysN)
	}

	// With the demo key revoked, the next seed makes a new one, and only that.
	if err := accounts.RevokeScannerKey(context.Background(), p.AccountID, p.ScannerKeyID); err != nil {
		t.Fatal(err)
	}
	third, out := seedOutput(t, env)
	if !strings.HasPrefix(third["DEMO_SCANNER_KEY"], "sdk_") || third["DEMO_SCANNER_KEY"] == key ||
		!strings.Contains(out, "Created now: scanner key.") {
		t.Errorf("a seed after revoking the demo key printed:\n%s", out)
	}
}
