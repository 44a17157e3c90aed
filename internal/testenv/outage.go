package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// PrivateRedis is a redis-server of one test's own, for tests that need Redis to
// go away. Never stop the shared Redis in a test; stop this one.
type PrivateRedis struct {
	URL    string
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
}

// StartPrivateRedis starts a redis-server on a free port (the binary must be on
// PATH; make test installs it) and stops it when the test ends. A port free a
// moment ago may be taken by a test starting beside this one: the server that
// answers must be this one (its process id), else it starts again on another.
func StartPrivateRedis(t testing.TB) *PrivateRedis {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testenv: redis-server is not on PATH (install Debian's redis-server, or run make test): %v", err)
	}
	for attempt := 1; ; attempt++ {
		r, err := startRedisOn(path, FreePort(t))
		if err == nil {
			t.Cleanup(r.Stop)
			return r
		}
		if attempt == 5 {
			t.Fatalf("testenv: private redis-server: %v", err)
		}
	}
}

// startRedisOn starts redis-server on port and waits until it answers; it
// fails if the process exits first (its port was taken) or if another
// process answers there.
func startRedisOn(path string, port int) (*PrivateRedis, error) {
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	r := &PrivateRedis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, exited: make(chan struct{})}
	r.URL = "redis://" + r.Addr + "/0"
	go func() { _ = cmd.Wait(); close(r.exited) }()
	client := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
	defer client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-r.exited:
			return nil, fmt.Errorf("redis-server on %s exited at its start (its port taken?)", r.Addr)
		default:
		}
		if info, err := client.Info(context.Background(), "server").Result(); err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return r, nil
			}
			r.Stop()
			return nil, fmt.Errorf("another redis-server answers on %s", r.Addr)
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("redis-server on %s did not answer", r.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit; calling it twice is harmless.
func (r *PrivateRedis) Stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
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
