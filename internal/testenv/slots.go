package testenv

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// PostgresProxy is a TCP proxy in front of a test's PostgreSQL that can be made
// to turn every new connection away as a server out of connection slots does
// (FATAL, SQLSTATE 53300, "sorry, too many clients already", answered to the
// startup message before any authentication), while the connections it
// already carries go on. A machine whose PostgreSQL serves many programs (or
// many tests) at once runs out of its max_connections this way; a test cannot
// make the shared server do it without starving every other test.
type PostgresProxy struct {
	// URL is the database URL through the proxy.
	URL string

	ln       net.Listener
	upstream string
	full     atomic.Bool
	refused  atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
	stopped  bool
}

// StartPostgresProxy starts a proxy to databaseURL's server on a free port of
// 127.0.0.1, passing every connection through until SetFull. It stops when the
// test ends.
func StartPostgresProxy(t testing.TB, databaseURL string) *PostgresProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("testenv: postgres proxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: postgres proxy: %v", err)
	}
	p := &PostgresProxy{ln: ln, upstream: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	port := ln.Addr().(*net.TCPAddr).Port
	if u, err := url.Parse(databaseURL); err == nil && u.Scheme != "" {
		u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p.URL = u.String()
	} else { // keyword/value: the last of a keyword wins
		p.URL = fmt.Sprintf("%s host=127.0.0.1 port=%d", databaseURL, port)
	}
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

// SetFull makes the proxy turn away every new connection with SQLSTATE 53300
// (full), or pass new connections through again (!full).
func (p *PostgresProxy) SetFull(full bool) { p.full.Store(full) }

// Refused is how many connections the proxy turned away.
func (p *PostgresProxy) Refused() int { return int(p.refused.Load()) }

func (p *PostgresProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if p.full.Load() {
			go p.refuse(c)
			continue
		}
		go p.pass(c)
	}
}

// refuse answers the client's startup as a PostgreSQL at max_connections does,
// declining SSL and GSS encryption first if the client asks for them.
func (p *PostgresProxy) refuse(c net.Conn) {
	defer c.Close()
	backend := pgproto3.NewBackend(c, c)
	for startup := false; !startup; {
		msg, err := backend.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := c.Write([]byte("N")); err != nil {
				return
			}
		default:
			startup = true
		}
	}
	p.refused.Add(1)
	backend.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL",
		Code: "53300", Message: "sorry, too many clients already"})
	_ = backend.Flush()
}

// pass carries the connection to the server and back.
func (p *PostgresProxy) pass(c net.Conn) {
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	var wg sync.WaitGroup
	for _, pair := range [][2]net.Conn{{up, c}, {c, up}} {
		wg.Go(func() {
			_, _ = io.Copy(pair[0], pair[1])
			if tcp, ok := pair[0].(*net.TCPConn); ok {
				_ = tcp.CloseWrite()
			}
		})
	}
	wg.Wait()
	c.Close()
	up.Close()
}

// track keeps the connections for stop, or closes them when the proxy stopped.
func (p *PostgresProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

func (p *PostgresProxy) stop() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
