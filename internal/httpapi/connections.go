package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/limits"
)

// The connection bounds of the public listener, below every ring: how many
// client connections an instance holds open at once, and how long a write may
// wait for a client that does not read. serve wraps its listener in Listener;
// in-process tests, which have no connections, go without.

// connWriteBuffer is the kernel's send buffer of a client connection (Linux
// doubles it for its own bookkeeping): a client that stops reading pins at
// most about this much of the machine's memory, the rest of its answer waiting
// in the handler's write, which STAGEDOOR_WRITE_TIMEOUT cuts. Left to autotune,
// it grows to 4 MB (net.ipv4.tcp_wmem): a 1.5 MB script sat whole in the
// kernel of every client that never read it. 128 KiB still carries 5 MB/s at
// 50 ms of round trip.
const connWriteBuffer = 128 << 10

// refusalDrain bounds how long a refused connection is read from after its
// answer (so that closing it does not reset the answer away before the client
// read it), and maxDraining how many are read from at once; past that a refused
// connection is closed at once.
const (
	refusalDrain = 500 * time.Millisecond
	maxDraining  = 256
)

// Listener wraps the public listener l in the connection bounds:
//
//   - At most STAGEDOOR_MAX_CONNECTIONS client connections are open at once.
//     The next is answered at once with 503 service-overloaded (Retry-After: 1,
//     Connection: close), written before its request is read, and closed:
//     refused, not left to wait in the kernel's backlog. Counted in
//     stagedoor_shed_total{bound="connections"}.
//   - Every write to a connection must make progress within
//     STAGEDOOR_WRITE_TIMEOUT: the deadline is set anew before each write, so
//     an answer of any size, and a live seat map that lasts hours, go on while
//     the client reads. A client that reads nothing for that long is cut and
//     the connection reset (SO_LINGER 0), so that the kernel drops what it
//     still held for it at once; counted in stagedoor_http_write_timeouts_total.
//   - The kernel holds at most connWriteBuffer of unsent answer per connection.
func (s *Server) Listener(l net.Listener) net.Listener {
	return s.bound(l, s.config.MaxConnections, string(limits.Connections), s.metrics.connections)
}

// metricsConnections bounds the metrics listener's connections: a few
// Prometheus servers scrape it.
const metricsConnections = 16

// MetricsListener wraps the metrics listener (STAGEDOOR_METRICS_ADDR) in the
// same bounds as Listener, with at most metricsConnections connections
// (refusals counted in stagedoor_shed_total{bound="metrics_connections"}).
func (s *Server) MetricsListener(l net.Listener) net.Listener {
	return s.bound(l, metricsConnections, "metrics_connections", nil)
}

func (s *Server) bound(l net.Listener, max int, bound string, open prometheus.Gauge) net.Listener {
	return &boundedListener{Listener: l, s: s, max: int64(max), bound: bound, gauge: open,
		refusal: connectionRefusal(max), draining: make(chan struct{}, maxDraining)}
}

// connectionRefusal is the whole HTTP answer to a connection over the bound,
// made once: it costs one write.
func connectionRefusal(max int) []byte {
	body := problemDocument(&Problem{Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
		Detail:     "this instance holds its maximum of " + strconv.Itoa(max) + " connections; retry shortly",
		Extensions: boundMember(string(limits.Connections))})
	head := "HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: application/problem+json\r\n" +
		"Cache-Control: no-store\r\n" +
		"Retry-After: 1\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	return append([]byte(head), body...)
}

type boundedListener struct {
	net.Listener
	s        *Server
	max      int64
	bound    string           // its label in stagedoor_shed_total
	gauge    prometheus.Gauge // its open connections; nil: not measured
	open     atomic.Int64
	refusal  []byte
	draining chan struct{} // a place for each refused connection being read from
}

// Accept returns the next connection under the bound, refusing those over it.
func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.refuse(c)
			continue
		}
		if l.gauge != nil {
			l.gauge.Inc()
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(connWriteBuffer)
		}
		return &boundedConn{Conn: c, l: l}, nil
	}
}

// refuse answers a connection over the bound and closes it. The answer is
// followed by the end of the stream (FIN), and what the client sends is read
// and dropped for a moment before the close, so that the close does not reset
// the answer away; when too many are being read from already, the connection
// is closed at once.
func (l *boundedListener) refuse(c net.Conn) {
	l.s.metrics.shed.WithLabelValues(l.bound).Inc()
	l.s.refusals.Count("bound", l.bound, slog.LevelWarn)
	_ = c.SetDeadline(time.Now().Add(refusalDrain))
	if _, err := c.Write(l.refusal); err != nil {
		c.Close()
		return
	}
	select {
	case l.draining <- struct{}{}:
	default:
		c.Close()
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	go func() {
		defer func() { <-l.draining }()
		defer c.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// boundedConn is a connection under the bound: its close gives its place back,
// and each write gets the write timeout.
type boundedConn struct {
	net.Conn
	l      *boundedListener
	closed sync.Once
}

func (c *boundedConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.l.s.config.WriteTimeout))
	n, err := c.Conn.Write(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// The client read nothing for the whole timeout: reset, not close,
		// so that the kernel frees the answer it still holds at once.
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.l.s.metrics.writeTimeouts.Inc()
	}
	return n, err
}

func (c *boundedConn) Close() error {
	c.closed.Do(func() {
		c.l.open.Add(-1)
		if c.l.gauge != nil {
			c.l.gauge.Dec()
		}
	})
	return c.Conn.Close()
}

// CloseWrite ends the stream of a TCP connection, as net/http does before it
// closes a connection whose request it did not read whole.
func (c *boundedConn) CloseWrite() error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return nil
}
