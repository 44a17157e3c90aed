package httpapi_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// boundedServer serves ts (behind the contract check) on a listener wrapped
// in the instance's connection bounds, as serve does (httpapi.Listener).
func boundedServer(t *testing.T, ts *testServer) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(ts.checked)
	srv.Listener = ts.Handler.Listener(srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// get sends GET path on conn (keep-alive) and reads the answer.
func get(t *testing.T, conn net.Conn, r *bufio.Reader, path string) *http.Response {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: stagedoor\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

// TestConnectionsBeyondTheBoundAreRefused: with STAGEDOOR_MAX_CONNECTIONS=3
// and three connections open, a fourth is answered 503 service-overloaded at
// once (Retry-After: 1, Connection: close) and closed, not left waiting; once
// one of the three closes, a new one is served.
func TestConnectionsBeyondTheBoundAreRefused(t *testing.T) {
	t.Parallel()
	ts := startInstance(t, instance{env: map[string]string{"STAGEDOOR_MAX_CONNECTIONS": "3", "STAGEDOOR_MAX_STREAMS": "1"}})
	srv := boundedServer(t, ts)
	addr := srv.Listener.Addr().String()

	var open []net.Conn
	for i := range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if resp := get(t, conn, bufio.NewReader(conn), "/healthz"); resp.StatusCode != 200 {
			t.Fatalf("connection %d: /healthz = %d", i+1, resp.StatusCode)
		}
		open = append(open, conn)
	}
	if got := metricValue(t, ts, "stagedoor_http_connections"); got != "3" {
		t.Errorf("stagedoor_http_connections = %q with three open, want 3", got)
	}

	fourth, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fourth.Close()
	r := bufio.NewReader(fourth)
	resp := get(t, fourth, r, "/healthz")
	body := make([]byte, 1024)
	n, _ := resp.Body.Read(body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !resp.Close ||
		resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body[:n]), "/problems/service-overloaded") || !strings.Contains(string(body[:n]), `"bound":"connections"`) {
		t.Fatalf("the fourth connection: %d, Retry-After %q, close %v, %s; want 503 service-overloaded, Retry-After: 1, closed",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, body[:n])
	}
	if _, err := r.ReadByte(); err == nil {
		t.Error("the refused connection stays open after its answer")
	}
	if got := metricValue(t, ts, `stagedoor_shed_total{bound="connections"}`); got != "1" {
		t.Errorf(`stagedoor_shed_total{bound="connections"} = %q, want 1`, got)
	}

	open[0].Close()
	waitFor(t, 10*time.Second, "a new connection served once one of the three closed", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer conn.Close()
		return get(t, conn, bufio.NewReader(conn), "/healthz").StatusCode == 200
	})
}

// tcpState is the kernel's state of a TCP connection (unix.BPF_TCP_*).
func tcpState(t *testing.T, conn *net.TCPConn) uint8 {
	t.Helper()
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var infoErr error
	if err := raw.Control(func(fd uintptr) { info, infoErr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		t.Fatal(err)
	}
	if infoErr != nil {
		t.Fatal(infoErr)
	}
	return info.State
}

// sockstatTCP is the kernel's TCP line of /proc/net/sockstat: its mem is the
// pages all TCP sockets of the machine hold.
func sockstatTCP() string {
	raw, _ := os.ReadFile("/proc/net/sockstat")
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "TCP:") {
			return line
		}
	}
	return ""
}

// TestAClientThatNeverReadsIsCut: a client asks for the 1.5 MB API-reference
// bundle and reads nothing. Past what the kernel takes for it, the server's
// write waits STAGEDOOR_WRITE_TIMEOUT, then the server resets the connection:
// the client's socket is closed by the peer (no FIN after data: a reset, so
// that nothing stays in the kernel for it), counted in
// stagedoor_http_write_timeouts_total, and its place is free again.
func TestAClientThatNeverReadsIsCut(t *testing.T) {
	t.Parallel()
	ts := startInstance(t, instance{env: map[string]string{"STAGEDOOR_WRITE_TIMEOUT": "300ms"}})
	srv := boundedServer(t, ts)
	before := sockstatTCP()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tc := conn.(*net.TCPConn)
	_ = tc.SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: stagedoor\r\n\r\n") // no Accept-Encoding: all 1.5 MB
	waitFor(t, 5*time.Second, "the server to hold the connection", func() bool {
		return metricValue(t, ts, "stagedoor_http_connections") == "1"
	})
	t.Logf("TCP before: %s; while the client stalls: %s", before, sockstatTCP())
	waitFor(t, 20*time.Second, "the server to cut the client that does not read", func() bool {
		return metricValue(t, ts, "stagedoor_http_write_timeouts_total") == "1" &&
			metricValue(t, ts, "stagedoor_http_connections") == "0"
	})
	waitFor(t, 5*time.Second, "the client's socket to be reset by the server", func() bool {
		return tcpState(t, tc) == unix.BPF_TCP_CLOSE
	})
	t.Logf("TCP after the cut: %s", sockstatTCP())
	// What the kernel had taken for it before the reset, then the reset itself
	// (a close would end in io.EOF).
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := 0
	for buf := make([]byte, 64<<10); err == nil; {
		var n int
		n, err = conn.Read(buf)
		got += n
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the client's read after the cut = %v, want connection reset", err)
	}
	t.Logf("the client could still read %d bytes of 1,510,168 the kernels held for it, then: %v", got, err)
}

// TestTheSeatStreamOutlivesTheWriteTimeout: the write timeout bounds each
// write, not a response: a live seat map stays open, idle between changes,
// for many times STAGEDOOR_WRITE_TIMEOUT, and every change reaches it.
func TestTheSeatStreamOutlivesTheWriteTimeout(t *testing.T) {
	t.Parallel()
	const writeTimeout = 200 * time.Millisecond
	ts := startInstance(t, instance{env: map[string]string{"STAGEDOOR_WRITE_TIMEOUT": writeTimeout.String(),
		"STAGEDOOR_LIMIT_HOLD_BUYER": "1000/1s"}})
	srv := boundedServer(t, ts)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(2, 10))

	start := time.Now()
	w := watchAt(t, srv.Listener.Addr().String(), event)
	if name, _, err := w.next(time.Now().Add(10 * time.Second)); err != nil || name != "snapshot" {
		t.Fatalf("first event %q, %v", name, err)
	}
	changes := 0
	for i := 0; time.Since(start) < 5*writeTimeout || changes < 2; i++ {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); a.StatusCode != 201 {
			t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
		}
		for {
			name, data, err := w.next(time.Now().Add(10 * time.Second))
			if err != nil {
				t.Fatalf("the stream was cut %v after it began, %d changes in: %v", time.Since(start), changes, err)
			}
			if name == "changes" && strings.Contains(string(data), seats[i]) {
				break
			}
		}
		changes++
	}
	t.Logf("the stream lasted %v (write timeout %v) and carried %d changes", time.Since(start).Round(time.Millisecond), writeTimeout, changes)
	if got := metricValue(t, ts, "stagedoor_http_write_timeouts_total"); got != "0" {
		t.Errorf("stagedoor_http_write_timeouts_total = %q, want 0", got)
	}
}
