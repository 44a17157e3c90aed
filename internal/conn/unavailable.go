package conn

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says PostgreSQL could not be reached (any
// failure to connect, whatever the server answered), ended
// the connection under the statement (class 57P: a restart, a failover, an
// operator's pg_terminate_backend; class 08: a connection exception; a refused
// dial; a connection broken mid-statement) or ran out of a resource (class 53,
// see Exhausted: a server at its max_connections turns the pool's new
// connection away with 53300), rather than refusing the statement itself.
// Such a failure is the database's outage, not the client's error: a retry
// (on a new connection, or once the server has room) may succeed.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	// A connection that could not be made is the database's, whatever the
	// server said (a database that allows no connections says 55000).
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "53")
	}
	var netErr net.Error
	return errors.As(err, &netErr) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "conn closed")
}

// Exhausted reports whether err is PostgreSQL refusing for want of a resource
// (class 53, insufficient resources: too many connections, as a server at its
// max_connections turns a new one away; out of memory; disk full; a
// configured limit). The server is up and the pool's live connections are
// good: a retry later may succeed, but resetting the pool would only give up
// the connections it has.
func Exhausted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "53")
}
