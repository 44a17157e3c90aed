package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// PrivateRedis is a redis-server of one test's own, for tests that need Redis to
// go away. Never stop the shared Redis in a test; stop this one.
type PrivateRedis struct {
	URL  string
	Addr string
	cmd  *exec.Cmd
}

// StartPrivateRedis starts a redis-server on a free port (the binary must be on
// PATH; make test installs it) and stops it when the test ends.
func StartPrivateRedis(t testing.TB) *PrivateRedis {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testenv: redis-server is not on PATH (install Debian's redis-server, or run make test): %v", err)
	}
	port := FreePort(t)
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	r := &PrivateRedis{
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		cmd:  cmd,
	}
	r.URL = "redis://" + r.Addr + "/0"
	t.Cleanup(r.Stop)

	client := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("testenv: private redis-server on %s did not answer", r.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

// Stop kills the server and waits for it to exit; calling it twice is harmless.
func (r *PrivateRedis) Stop() {
	if r.cmd.Process == nil || r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// DeadRedisURL returns the URL of a local port that nobody answers.
func DeadRedisURL(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("redis://127.0.0.1:%d/0", FreePort(t))
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
