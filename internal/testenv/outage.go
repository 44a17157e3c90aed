package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// PrivateRedis is a redis-server of one test's own, for tests that need Redis to
// go away. Never stop the shared Redis in a test; stop this one.
type PrivateRedis struct {
	URL    string
	Addr   string
	t      testing.TB
	path   string   // the redis-server binary
	port   int      // kept across Restart
	args   []string // redis-server's arguments after the port's
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
}

// StartPrivateRedis starts a redis-server on a free port (the binary must be on
// PATH; make test installs it), with args after its own (such as
// "--cluster-enabled", "yes"), in a directory of the test's, and stops it when
// the test ends. A port free a moment ago may be taken by a test starting
// beside this one: the server that answers must be this one (its process
// id), else it starts again on another.
func StartPrivateRedis(t testing.TB, args ...string) *PrivateRedis {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testenv: redis-server is not on PATH (install Debian's redis-server, or run make test): %v", err)
	}
	for attempt := 1; ; attempt++ {
		r := &PrivateRedis{t: t, path: path, port: FreePort(t), args: args}
		r.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))
		r.URL = "redis://" + r.Addr + "/0"
		err := r.start()
		if err == nil {
			t.Cleanup(r.Stop)
			return r
		}
		if attempt == 5 {
			t.Fatalf("testenv: private redis-server: %v", err)
		}
	}
}

// Restart starts the server again on its port, with its arguments, after
// Stop, and waits until it answers.
func (r *PrivateRedis) Restart() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatalf("testenv: private redis-server again: %v", err)
	}
}

// Freeze stops the server's process (SIGSTOP) without closing its port:
// connections are accepted, nothing is answered, until Thaw.
func (r *PrivateRedis) Freeze() { r.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server run again (SIGCONT).
func (r *PrivateRedis) Thaw() { r.signal(syscall.SIGCONT) }

func (r *PrivateRedis) signal(s syscall.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(s); err != nil {
		r.t.Fatalf("testenv: signal %v to redis-server: %v", s, err)
	}
}

// start starts redis-server on r's port and waits until it answers; it
// fails if the process exits first (its port was taken) or if another
// process answers there.
func (r *PrivateRedis) start() error {
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", r.t.TempDir()}, r.args...)
	cmd := exec.Command(r.path, args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	exited := r.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	client := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
	defer client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited at its start (its port taken?)", r.Addr)
		default:
		}
		if info, err := client.Info(context.Background(), "server").Result(); err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return nil
			}
			r.Stop()
			return fmt.Errorf("another redis-server answers on %s", r.Addr)
		}
		if time.Now().After(deadline) {
			r.Stop()
			return fmt.Errorf("redis-server on %s did not answer", r.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit; calling it twice is harmless.
// A frozen server is killed too.
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
