package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
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
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
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
