package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestMain adds a slow route for the drain tests, and runs the real main when
// the test binary is started as the program under test.
func TestMain(m *testing.M) {
	wrapHandler = withSlowRoute
	if os.Getenv("STAGEDOOR_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// withSlowRoute serves GET /test/slow: it sends its headers at once, then takes
// a second to finish its body.
func withSlowRoute(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.HandleFunc("GET /test/slow", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(time.Second)
		io.WriteString(w, "finished")
	})
	return mux
}

// testEnv is the environment of one program under test: its own database and
// Redis key space, and port 0. The worker utilization shedder is off: under
// the race detector on a busy machine it would rightly shed these tests'
// requests, which are about other things (internal/shed tests it). Redis has
// 2 s to answer, so that a busy machine does not make a limit fail open (the
// default 50 ms is a production choice).
func testEnv(t *testing.T) map[string]string {
	return map[string]string{
		"DATABASE_URL":                 testenv.DatabaseURL(t),
		"REDIS_URL":                    testenv.RedisURL(t),
		"STAGEDOOR_REDIS_PREFIX":       testenv.RedisPrefix(t),
		"STAGEDOOR_ADDR":               "127.0.0.1:0",
		"STAGEDOOR_METRICS_ADDR":       "127.0.0.1:0",
		"STAGEDOOR_BCRYPT_COST":        "4",
		"STAGEDOOR_WORKER_UTILIZATION": "off",
		"STAGEDOOR_REDIS_TIMEOUT":      "2s",
	}
}

// listeningAddr reads the program's JSON log until it says where it listens.
func listeningAddr(t *testing.T, log io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(log)
		for scanner.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "listening" {
				found <- line.Addr
				break
			}
		}
		io.Copy(io.Discard, log)
	}()
	select {
	case addr := <-found:
		return "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatal("the program did not say where it listens within 30 s")
		return ""
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	testenv.EventuallyNil(t, 10*time.Second, testenv.GetOK(base+"/healthz"), "/healthz answering 200")
}

func getJSON(t *testing.T, url string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body
}

// TestRunServesAndDrains starts the whole program on port 0 against the real
// services, checks health, readiness and a problem, then ends it (as SIGTERM
// does) while a slow request is in flight: the request finishes, run returns nil.
func TestRunServesAndDrains(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, io.Discard, logW)
		logW.Close()
	}()
	base := listeningAddr(t, logR)
	waitHealthy(t, base)

	resp, body := getJSON(t, base+"/readyz")
	if resp.StatusCode != 200 || body["status"] != "ready" || body["postgres"] != "ok" || body["redis"] != "ok" {
		t.Errorf("/readyz = %d %v", resp.StatusCode, body)
	}
	resp, body = getJSON(t, base+"/v1/no-such-route")
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/problem+json" || body["type"] != "/problems/not-found" {
		t.Errorf("unknown route = %d %q %v, want a 404 problem", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	slow, err := http.Get(base + "/test/slow")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	finished, err := io.ReadAll(slow.Body)
	slow.Body.Close()
	if err != nil || string(finished) != "finished" {
		t.Errorf("the slow request was cut: %q, %v", finished, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after shutdown, want nil", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("run did not return after shutdown")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still takes requests after shutdown")
	}
}

// startProgram runs the test binary as the stagedoor program with env.
func startProgram(t *testing.T, env map[string]string, args ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "STAGEDOOR_TEST_RUN_MAIN=1")
	return cmd, startCmd(t, cmd, env, func() { _ = cmd.Process.Kill() })
}

// startCmd starts cmd with env added to its environment, and returns its
// standard error; stop, run at the test's end, stops it.
func startCmd(t *testing.T, cmd *exec.Cmd, env map[string]string, stop func()) io.Reader {
	t.Helper()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stderr
}

// TestSIGTERMDrainsSlowRequest sends a real SIGTERM to the program with a slow
// request in flight: the request finishes and the program exits 0.
func TestSIGTERMDrainsSlowRequest(t *testing.T) {
	t.Parallel()
	cmd, stderr := startProgram(t, testEnv(t), "serve")
	base := listeningAddr(t, stderr)
	waitHealthy(t, base)

	slow, err := http.Get(base + "/test/slow")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	finished, err := io.ReadAll(slow.Body)
	slow.Body.Close()
	if err != nil || string(finished) != "finished" {
		t.Errorf("SIGTERM cut the slow request: %q, %v", finished, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM the program exited with %v, want 0", err)
	}
}

// TestBadLimitStopsWithExit2: a bad STAGEDOOR_LIMIT_HOLD_BUYER stops the start
// with exit code 2 and a message naming the variable.
func TestBadLimitStopsWithExit2(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "lots/minute"}
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), "STAGEDOOR_TEST_RUN_MAIN=1", "STAGEDOOR_LIMIT_HOLD_BUYER="+env["STAGEDOOR_LIMIT_HOLD_BUYER"])
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Fatalf("exit = %v, want code 2; output: %s", err, out)
	}
	if !strings.Contains(string(out), "STAGEDOOR_LIMIT_HOLD_BUYER") {
		t.Errorf("the message does not name the variable: %s", out)
	}

	err = run(context.Background(), nil, func(k string) string { return env[k] }, io.Discard, io.Discard)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || exitCode(err) != 2 {
		t.Errorf("run = %v, want a config error with exit code 2", err)
	}
}

// TestBadAddressStopsBeforeMigrating: each address variable, bad, stops the
// program with exit code 2 naming it, before it migrates or connects: the
// empty database it was given stays empty.
func TestBadAddressStopsBeforeMigrating(t *testing.T) {
	t.Parallel()
	dbURL := testenv.EmptyDatabaseURL(t)
	for variable, value := range map[string]string{
		"STAGEDOOR_ADDR":         "nonsense",
		"STAGEDOOR_METRICS_ADDR": "9091",
		"PAYRAIL_ADDR":           "127.0.0.1:http",
		"REDIS_URL":              "127.0.0.1:6379",
		"PAYRAIL_URL":            "127.0.0.1:8090",
		"PAYRAIL_DATABASE_URL":   "host=127.0.0.1",
		"STAGEDOOR_SMTP_URL":     "smtp://stagedoor:hunter2hunter2@mail.example.com:99999",
		"STAGEDOOR_MAIL_FROM":    "Stagedoor",
		"STAGEDOOR_PUBLIC_URL":   "tickets.example.com",
	} {
		cmd := exec.Command(os.Args[0], "serve")
		cmd.Env = append(os.Environ(), "STAGEDOOR_TEST_RUN_MAIN=1", "DATABASE_URL="+dbURL, variable+"="+value)
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(string(out), variable) || strings.Contains(string(out), "hunter2") {
			t.Errorf("%s=%q: exit %v, want code 2 and a message naming it (and no password); output: %s", variable, value, err, out)
		}
	}
	db, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var tables int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("the database has %d tables after the refused starts, want none: something migrated", tables)
	}
}

// TestPayrailNeedsAnAPIKey: the Payrail stub does not start without
// PAYRAIL_API_KEY (exit code 2, naming it), so that it never serves anyone
// who asks.
func TestPayrailNeedsAnAPIKey(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"payrail"}, func(string) string { return "" }, io.Discard, io.Discard)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "PAYRAIL_API_KEY") {
		t.Errorf("run payrail without a key = %v, want exit code 2 naming PAYRAIL_API_KEY", err)
	}
}

func TestUnknownCommandExits2(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"fly"}, func(string) string { return "" }, io.Discard, io.Discard)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "fly") {
		t.Errorf("run fly = %v", err)
	}
}

func TestHealthcheckCommand(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, func(k string) string { return env[k] }, io.Discard, logW)
		logW.Close()
	}()
	base := listeningAddr(t, logR)
	waitHealthy(t, base)
	noEnv := func(string) string { return "" }
	if err := run(context.Background(), []string{"healthcheck", base + "/healthz"}, noEnv, io.Discard, io.Discard); err != nil {
		t.Errorf("healthcheck of a healthy server = %v", err)
	}
	if err := run(context.Background(), []string{"healthcheck", base + "/nowhere"}, noEnv, io.Discard, io.Discard); err == nil {
		t.Error("healthcheck of a 404 succeeded")
	}
	stop()
	<-done
}
