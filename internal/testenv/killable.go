package testenv

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// KillableServer serves a handler on a fixed loopback address, and can be
// killed and started again there, as a process is. Kill does what SIGKILL
// does to a server's sockets: the listener closes, so new connections are
// refused, and every open connection is cut, answered or not.
type KillableServer struct {
	t       testing.TB
	handler http.Handler
	addr    string

	mu       sync.Mutex
	ln       net.Listener
	srv      *http.Server
	conns    map[net.Conn]bool
	accepted int
}

// NewKillableServer starts serving h on a free port of 127.0.0.1; it is
// killed when the test ends.
func NewKillableServer(t testing.TB, h http.Handler) *KillableServer {
	t.Helper()
	k := &KillableServer{t: t, handler: h, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t))), conns: map[net.Conn]bool{}}
	k.Start()
	t.Cleanup(k.Kill)
	return k
}

// URL is the server's base URL, the same across restarts.
func (k *KillableServer) URL() string { return "http://" + k.addr }

// Accepted is how many connections the server has accepted since it was
// made, across restarts.
func (k *KillableServer) Accepted() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.accepted
}

// Start serves on the server's address again (after Kill). The port may take
// a moment to be free again; Start waits up to 5 s for it.
func (k *KillableServer) Start() {
	k.t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ln, err = net.Listen("tcp", k.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		k.t.Fatalf("testenv: killable server: listen on %s: %v", k.addr, err)
	}
	srv := &http.Server{Handler: k.handler, ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(c net.Conn, s http.ConnState) {
			k.mu.Lock()
			defer k.mu.Unlock()
			switch s {
			case http.StateNew:
				k.conns[c] = true
				k.accepted++
			case http.StateClosed, http.StateHijacked:
				delete(k.conns, c)
			}
		}}
	k.mu.Lock()
	k.ln, k.srv = ln, srv
	k.mu.Unlock()
	go srv.Serve(ln) //nolint:errcheck // ends with Kill
}

// Kill stops the server at once, as a killed process: new connections are
// refused from now on and every open one is cut with a reset, whatever its
// request is doing. Killing a killed server does nothing.
func (k *KillableServer) Kill() {
	k.mu.Lock()
	ln, conns := k.ln, k.conns
	k.ln, k.conns = nil, map[net.Conn]bool{}
	k.mu.Unlock()
	if ln == nil {
		return
	}
	_ = ln.Close() // first: a client's resend must find nothing listening
	for c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as the kernel sends for a dead process
		}
		_ = c.Close()
	}
	_ = k.srv.Close() // the handlers still running see their connection gone
}
