package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/onsale"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestFlags: the environment of make cluster (. .cluster/env) is all the
// setup there is; the clients' own addresses follow the URL; the faults are
// commands run at their times.
func TestFlags(t *testing.T) {
	f, err := parse([]string{"-buyers", "10", "-fault-redis-at", "5s", "-fault-redis-cmd", "true"},
		env("STAGEDOOR_URL", "http://127.0.0.1:8080", "DATABASE_URL", "postgres://x/y", "STAGEDOOR_ADMIN_TOKEN", "tok"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.o.URL != "http://127.0.0.1:8080" || f.databaseURL != "postgres://x/y" || f.o.AdminToken != "tok" || f.o.Buyers != 10 {
		t.Errorf("options = %+v, database %q", f.o, f.databaseURL)
	}
	if !f.o.SourceAddrs {
		t.Errorf("a loopback URL should dial from the clients' own addresses")
	}
	if len(f.o.Faults) != 1 || f.o.Faults[0].At != 5*time.Second {
		t.Fatalf("faults = %+v", f.o.Faults)
	}
	if err := f.o.Faults[0].Do(context.Background(), onsale.Sale{EventID: "e"}); err != nil {
		t.Errorf("the fault's command: %v", err)
	}

	// Behind PgBouncer (make cluster's env), PostgreSQL itself.
	direct, err := parse(nil, env("DATABASE_URL", "postgres://pgbouncer/y", "STAGEDOOR_DIRECT_DATABASE_URL", "postgres://x/y"), io.Discard)
	if err != nil || direct.databaseURL != "postgres://x/y" {
		t.Errorf("behind a pooler: database %q, %v; want STAGEDOOR_DIRECT_DATABASE_URL", direct.databaseURL, err)
	}

	remote, err := parse([]string{"-url", "http://stagedoor.example:8080", "-database-url", "postgres://x/y"}, env(), io.Discard)
	if err != nil || remote.o.SourceAddrs {
		t.Errorf("a remote URL: source addresses %v, %v; want the system's", remote.o.SourceAddrs, err)
	}
	for _, args := range [][]string{{}, {"-database-url", "postgres://x/y", "-source-addrs", "maybe"}, {"-database-url", "postgres://x/y", "extra"}} {
		if _, err := parse(args, env(), io.Discard); err == nil {
			t.Errorf("parse(%q) accepted", args)
		}
	}
}

// TestFaultCommandGetsTheSale: the command sees the event in its environment,
// and its failure is the fault's error.
func TestFaultCommandGetsTheSale(t *testing.T) {
	out := filepath.Join(t.TempDir(), "event")
	f := commandFault("f", 0, `echo "$ONSALE_EVENT_ID" > `+out+`; exit 3`, io.Discard)
	err := f.Do(context.Background(), onsale.Sale{EventID: "ev-1"})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a failing command: %v", err)
	}
	if b, _ := os.ReadFile(out); strings.TrimSpace(string(b)) != "ev-1" {
		t.Errorf("the command saw ONSALE_EVENT_ID=%q", b)
	}
}

// TestRenderAgain: -render writes the page of a report.json beside it.
func TestRenderAgain(t *testing.T) {
	dir := t.TempDir()
	json := filepath.Join(dir, "report.json")
	if err := os.WriteFile(json, []byte(`{"passed":true,"seats":10,"buyers":5,"series":{"t0_s":-1,"seats_sold":[0,5,10]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	if code := run(context.Background(), []string{"-render", json}, env(), &stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "every check passed") {
		t.Errorf("report.html: %v", err)
	}
}
