package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestDemoRunsTheWholeFlow starts the real program as make run does (Payrail,
// and serve against it, on free ports of a test database), runs stagedoor seed
// and then stagedoor demo against it, as programs: demo exits 0 having made
// every step. With the buyer's password wrong it exits non-zero at the login,
// printing the problem; without a scanner key it makes one for the run.
func TestDemoRunsTheWholeFlow(t *testing.T) {
	t.Parallel()
	base, envFile := startSeededStack(t, testEnv(t))

	t.Run("succeeds", func(t *testing.T) {
		out := demoSays(t, []string{"-url", base, "-env-file", envFile},
			"buyer     POST /v1/login → 200 OK: logged in as demo-buyer@example.com (buyer)",
			"buyer     GET /v1/events?limit=100 → 200 OK",
			"/seats → 200 OK: 300 seats, 300 available",
			"buyer     POST /v1/holds → 201 Created: active: Stalls A1 and Stalls A2",
			"buyer     POST /v1/orders → 201 Created: order confirmed, 2 tickets, 90.00 USD",
			"buyer     GET /v1/tickets → 200 OK: 2 tickets (2 valid), this order's 2 among them",
			"door      POST /v1/scans → 200 OK: admitted",
			"door      POST /v1/scans → 409 Conflict: already_scanned",
			"organizer POST /v1/login → 200 OK",
			"organizer GET /v1/organizer/events → 200 OK: 1 event; \"Stagedoor Demo Night\": 2 seats sold, 0 held",
			"/scans?limit=2 → 200 OK: newest first: already_scanned",
			"The whole flow worked.")
		if strings.Contains(out, "scanner-keys") {
			t.Errorf("with DEMO_SCANNER_KEY in the file, demo made a key of its own:\n%s", out)
		}
	})

	t.Run("fails at a wrong password, printing the problem", func(t *testing.T) {
		out, code := runDemo(t, []string{"DEMO_BUYER_PASSWORD=not-the-password"}, "-url", base, "-env-file", envFile)
		if code == 0 {
			t.Fatalf("demo with a wrong password exited 0:\n%s", out)
		}
		if !strings.Contains(out, "401 Unauthorized, want 200: problem /problems/invalid-credentials") ||
			strings.Contains(out, "/v1/events") {
			t.Errorf("demo did not stop at the login with the problem:\n%s", out)
		}
	})

	t.Run("without a scanner key, makes one for the run", func(t *testing.T) {
		// No file: seed's accounts, the event found by its name.
		demoSays(t, []string{"-url", base, "-env-file", filepath.Join(t.TempDir(), "none")},
			"organizer POST /v1/scanner-keys → 201 Created",
			"door      POST /v1/scans → 200 OK: admitted",
			"organizer DELETE /v1/scanner-keys/",
			"4 seats sold")
	})

	t.Run("no Stagedoor there", func(t *testing.T) {
		nowhere := fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t))
		out, code := runDemo(t, nil, "-url", nowhere, "-env-file", envFile)
		if code == 0 || !strings.Contains(out, "is Stagedoor running there?") {
			t.Errorf("demo against nothing exited %d:\n%s", code, out)
		}
	})
}

// startSeededStack starts the real program as make run does: Payrail, then
// serve against it, on free ports, with env (a test database); then it runs
// stagedoor seed, writing the demo file to a folder of the test's own. It
// returns serve's base URL and the demo file's path.
func startSeededStack(t *testing.T, env map[string]string) (base, envFile string) {
	t.Helper()
	payrailAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	key := "prk_" + ids.New()
	_, payrailLog := startProgram(t, map[string]string{
		"PAYRAIL_ADDR": payrailAddr, "PAYRAIL_DATABASE_URL": env["DATABASE_URL"],
		"PAYRAIL_LATENCY": "10ms", "STAGEDOOR_LOG_LEVEL": "warn", "PAYRAIL_API_KEY": key,
	}, "payrail")
	go io.Copy(io.Discard, payrailLog)
	waitHealthy(t, "http://"+payrailAddr)
	env["PAYRAIL_URL"], env["PAYRAIL_API_KEY"] = "http://"+payrailAddr, key
	_, serveLog := startProgram(t, env, "serve")
	base = listeningAddr(t, serveLog)
	waitHealthy(t, base)

	envFile = filepath.Join(t.TempDir(), ".env.demo")
	var seedOut, seedErr bytes.Buffer
	if err := run(context.Background(), []string{"seed", "-env-file", envFile}, func(k string) string { return env[k] }, &seedOut, &seedErr); err != nil {
		t.Fatalf("stagedoor seed: %v\n%s", err, seedErr.String())
	}
	return base, envFile
}

// demoSays runs stagedoor demo with args, wants it to exit 0 and to print
// each of steps, and returns what it printed.
func demoSays(t *testing.T, args []string, steps ...string) string {
	t.Helper()
	out, code := runDemo(t, nil, args...)
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	for _, step := range steps {
		if !strings.Contains(out, step) {
			t.Errorf("the output lacks %q:\n%s", step, out)
		}
	}
	return out
}

// runDemo runs stagedoor demo as a program, with env added to the test's own
// environment, and returns what it printed and its exit code.
func runDemo(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"demo"}, args...)...)
	cmd.Env = []string{"STAGEDOOR_TEST_RUN_MAIN=1"}
	for _, kv := range os.Environ() { // not the demo data of a shell that loaded .env.demo
		if !strings.HasPrefix(kv, "DEMO_") && !strings.HasPrefix(kv, "STAGEDOOR_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exitErr):
		return string(out), exitErr.ExitCode()
	}
	t.Fatalf("run demo: %v", err)
	return "", -1
}
