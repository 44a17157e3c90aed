package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// seedOutput runs stagedoor seed with its environment file at envFile and
// returns the assignments it printed, and all it printed. The file must hold
// exactly those lines.
func seedOutput(t *testing.T, env map[string]string, envFile string) (map[string]string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"seed", "-env-file", envFile}, func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
		t.Fatalf("stagedoor seed: %v\n%s", err, stderr.String())
	}
	printed := filepath.Join(t.TempDir(), "printed")
	if err := os.WriteFile(printed, stdout.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	vars, err := readEnvFile(printed)
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, stdout.String())
	}
	written, err := readEnvFile(envFile)
	if err != nil {
		t.Fatalf("seed wrote no %s: %v", envFile, err)
	}
	if !maps.Equal(vars, written) {
		t.Errorf("%s holds %v, but seed printed %v", envFile, written, vars)
	}
	if info, err := os.Stat(envFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600 (it holds a scanner key)", envFile, info.Mode(), err)
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
	envFile := filepath.Join(t.TempDir(), ".env.demo")
	first, out := seedOutput(t, env, envFile)
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

	// Again, with the file of the first: the key is kept from it.
	second, out := seedOutput(t, env, envFile)
	if second["DEMO_SCANNER_KEY"] != key || second["DEMO_EVENT"] != first["DEMO_EVENT"] ||
		second["DEMO_SCANNER_KEY_ID"] != first["DEMO_SCANNER_KEY_ID"] ||
		!strings.Contains(out, "Created now: nothing") || !strings.Contains(out, "kept from "+envFile) {
		t.Errorf("second seed printed:\n%s", out)
	}
	// Writing no file, the key cannot be shown again: it is stored as a hash.
	var noFile, noFileErr bytes.Buffer
	if err := run(context.Background(), []string{"seed", "-env-file="}, func(k string) string { return env[k] }, &noFile, &noFileErr); err != nil {
		t.Fatalf("seed -env-file=: %v\n%s", err, noFileErr.String())
	}
	if out := noFile.String(); strings.Contains(out, "DEMO_SCANNER_KEY=") || !strings.Contains(out, "Created now: nothing") ||
		!strings.Contains(out, "stored only as a hash") {
		t.Errorf("a seed writing no file printed:\n%s", out)
	}
	count := func() (accountsN, eventsN, seatsN, liveKeys int) {
		t.Helper()
		if err := db.QueryRow(context.Background(), `
			SELECT (SELECT count(*) FROM accounts), (SELECT count(*) FROM events),
			       (SELECT count(*) FROM seats), (SELECT count(*) FROM scanner_keys WHERE revoked_at IS NULL)`).
			Scan(&accountsN, &eventsN, &seatsN, &liveKeys); err != nil {
			t.Fatal(err)
		}
		return
	}
	if a, e, st, k := count(); a != 2 || e != 1 || st != 500 || k != 1 {
		t.Errorf("after three seeds: %d accounts, %d events, %d seats and places, %d live scanner keys; want 2, 1, 500, 1", a, e, st, k)
	}

	// With a file that lacks the key (a fresh clone, a deleted file), the demo
	// would have no key to scan with: the old one is revoked, a new one made.
	elsewhere, out := seedOutput(t, env, filepath.Join(t.TempDir(), ".env.demo"))
	if k := elsewhere["DEMO_SCANNER_KEY"]; !strings.HasPrefix(k, "sdk_") || k == key || !strings.Contains(out, "Created now: scanner key (") {
		t.Errorf("a seed whose file lacks the key printed:\n%s", out)
	}
	// A service of its own: accounts trusts the key it checked for a second.
	if _, err := auth.NewService(db, 4).AuthenticateScannerKey(context.Background(), key); err == nil {
		t.Error("the key whose secret was lost still works")
	}
	if _, _, _, k := count(); k != 1 {
		t.Errorf("%d live demo keys, want 1", k)
	}
}

// TestSeedOutputLoadsInTheShells: what seed prints is read the same by bash
// (and zsh, when installed) as by readEnvFile, sourced under set -eu; the admin
// token of seed's environment is among it.
func TestSeedOutputLoadsInTheShells(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["STAGEDOOR_ADMIN_TOKEN"] = "dev-admin-token-0123456789"
	envFile := filepath.Join(t.TempDir(), ".env.demo")
	vars, out := seedOutput(t, env, envFile)
	if vars["STAGEDOOR_ADMIN_TOKEN"] != env["STAGEDOOR_ADMIN_TOKEN"] {
		t.Errorf("seed did not record the admin token:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "# ") && strings.Contains(line, "#") {
			t.Errorf("an assignment with a comment after it (zsh reads it as a command): %q", line)
		}
	}
	names := []string{"DEMO_ORGANIZER_EMAIL", "DEMO_ORGANIZER_PASSWORD", "DEMO_BUYER_EMAIL", "DEMO_BUYER_PASSWORD",
		"DEMO_EVENT", "DEMO_SCANNER_KEY_ID", "DEMO_SCANNER_KEY", "STAGEDOOR_ADMIN_TOKEN"}
	for _, shell := range []string{"bash", "zsh", "sh"} {
		assertShellReads(t, shell, envFile, names, vars)
	}

	// Seeding again where the token is not in the environment (". ./.env.demo"
	// does not export it) keeps the file's token: make run keeps using it.
	delete(env, "STAGEDOOR_ADMIN_TOKEN")
	if again, out := seedOutput(t, env, envFile); again["STAGEDOOR_ADMIN_TOKEN"] != vars["STAGEDOOR_ADMIN_TOKEN"] {
		t.Errorf("a second seed without the token in its environment lost it:\n%s", out)
	}
}

// TestShellQuoteRoundTrips: values no seed makes today, but a changed one
// might, come back from bash as they went in.
func TestShellQuoteRoundTrips(t *testing.T) {
	t.Parallel()
	values := map[string]string{
		"A": "it's", "B": `$HOME "quoted" \back` + "`date`", "C": "two  spaces # not a comment", "D": "", "E": "''",
	}
	var lines shellLines
	lines.comment("a comment\nwith a newline; A='not this'")
	for _, name := range []string{"A", "B", "C", "D", "E"} {
		lines.set(name, values[name])
	}
	file := filepath.Join(t.TempDir(), "env")
	if err := writeEnvFile(file, lines.String()); err != nil {
		t.Fatal(err)
	}
	read, err := readEnvFile(file)
	if err != nil || !maps.Equal(read, values) {
		t.Errorf("readEnvFile = %q, %v; want %q\n%s", read, err, values, lines.String())
	}
	assertShellReads(t, "bash", file, []string{"A", "B", "C", "D", "E"}, values)
}

// assertShellReads sources file in shell under set -eu and checks that each
// variable of names has its value in want. A shell not installed is skipped.
func assertShellReads(t *testing.T, shell, file string, names []string, want map[string]string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Logf("%s is not installed: not checked with it", shell)
		return
	}
	script := "set -eu; . \"$1\"" // "$1" is the file, given as an argument: nothing to quote
	for _, name := range names {
		script += "; printf '%s\\0' \"$" + name + "\""
	}
	out, err := exec.Command(shell, "-c", script, shell, file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -c '%s': %v\n%s", shell, script, err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i, name := range names {
		if i >= len(got) || got[i] != want[name] {
			t.Errorf("%s reads %s as %q, want %q", shell, name, got[min(i, len(got)-1)], want[name])
		}
	}
}
