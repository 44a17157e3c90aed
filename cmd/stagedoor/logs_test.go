package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestEveryLogLineIsJSON: with Redis unreachable, logins go through the
// limiter's fallback and go-redis fails to dial; every line the program writes,
// go-redis's included, is JSON, and go-redis's failures are one WARN line of a
// Redis outage, not a line per request.
func TestEveryLogLineIsJSON(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["REDIS_URL"] = testenv.DeadRedisURL(t)
	cmd, stderr := startProgram(t, env, "serve")
	lines := linesOf(stderr)
	base := ""
	for l := range lines {
		var m struct{ Msg, Addr string }
		if json.Unmarshal([]byte(l), &m) == nil && m.Msg == "listening" {
			base = "http://" + m.Addr
			break
		}
	}
	if base == "" {
		t.Fatal("the program did not say where it listens")
	}
	for range 20 {
		resp, err := http.Post(base+"/v1/login", "application/json",
			strings.NewReader(`{"email":"nobody@example.com","password":"wrong password"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// go-redis logs a failed dial once its retries are over, a few seconds on.
	redisWarnings := 0
	check := func(l string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("a log line is not JSON: %q", l)
			return
		}
		if m["dependency"] == "redis" && m["level"] == "WARN" {
			redisWarnings++
		}
	}
	for deadline := time.After(15 * time.Second); redisWarnings == 0; {
		select {
		case l := <-lines:
			check(l)
		case <-deadline:
			t.Fatal("go-redis's dial failures were not logged within 15 s")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		check(l)
	}
	_ = cmd.Wait()
	if redisWarnings != 1 {
		t.Errorf("%d WARN lines about Redis for 20 failing requests, want 1", redisWarnings)
	}
}

// TestTextLogsForAPerson: with STAGEDOOR_LOG_FORMAT=text the program writes
// short lines of text, a request as "GET /v1/events 200 1.2 ms"; a page's
// assets (/ui/*) and the probes write none, the page itself one.
func TestTextLogsForAPerson(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["STAGEDOOR_LOG_FORMAT"] = "text"
	cmd, stderr := startProgram(t, env, "serve")
	lines := linesOf(stderr)
	var seen []string
	base := ""
	listening := regexp.MustCompile(`^\d\d:\d\d:\d\d listening addr=(\S+)$`)
	for l := range lines {
		seen = append(seen, l)
		if m := listening.FindStringSubmatch(l); m != nil {
			base = "http://" + m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("the program did not say where it listens, in text: %q", seen)
	}
	waitHealthy(t, base)
	for _, path := range []string{"/", "/ui/app.css", "/ui/js/app.js", "/v1/events", "/readyz"} {
		if err := testenv.GetOK(base + path)(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	_ = cmd.Wait()
	want := map[string]*regexp.Regexp{
		"the page":        regexp.MustCompile(`^\d\d:\d\d:\d\d GET / 200 \d+(\.\d)? ms$`),
		"the API's read":  regexp.MustCompile(`^\d\d:\d\d:\d\d GET /v1/events 200 \d+(\.\d)? ms$`),
		"the last line":   regexp.MustCompile(`^\d\d:\d\d:\d\d stopped$`),
		"the migrations'": regexp.MustCompile(`^\d\d:\d\d:\d\d migrations up to date applied_now=\d+$`),
	}
	for what, re := range want {
		if !slices.ContainsFunc(seen, re.MatchString) {
			t.Errorf("no line of %s (%s) in:\n%s", what, re, strings.Join(seen, "\n"))
		}
	}
	for _, l := range seen {
		if strings.HasPrefix(l, "{") || strings.Contains(l, "/ui/") || strings.Contains(l, "/healthz") || strings.Contains(l, "/readyz") {
			t.Errorf("a line a person should not have to read: %q", l)
		}
	}
}

// linesOf sends each line r gives, read in the background, closed at its end.
func linesOf(r io.Reader) <-chan string {
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}
