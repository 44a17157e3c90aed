package conn

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The waits of a Listener between two attempts to listen.
const (
	listenConnectTimeout = 5 * time.Second        // one attempt to open the connection
	listenMinBackoff     = 100 * time.Millisecond // the first wait before listening again
	listenMaxBackoff     = 5 * time.Second        // the longest
)

// Listener LISTENs on one PostgreSQL channel, on a connection of its own,
// opened again (after a wait doubling from 100 ms to 5 s) whenever it is lost.
// limitadmin hears the limits' setting changes with one, auth the logouts and
// revocations.
type Listener struct {
	// Config is the connection's configuration (a copy of the pool's, with an
	// application_name of its own).
	Config *pgx.ConnConfig
	// Channel is the channel listened on.
	Channel string
	// Listening is called each time the connection starts listening, and returns
	// what to call when it stops: a notification may have been missed while
	// nobody listened, so this is where a listener catches up.
	Listening func(ctx context.Context) (stopped func())
	// Notified is called with each notification's payload.
	Notified func(ctx context.Context, payload string)
	// Lost is called when the connection is lost (or could not be opened), with
	// the wait before the next attempt.
	Lost func(err error, retryIn time.Duration)
}

// Run listens until ctx ends.
func (l Listener) Run(ctx context.Context) {
	backoff := listenMinBackoff
	for {
		err := l.once(ctx, func() { backoff = listenMinBackoff })
		if ctx.Err() != nil {
			return
		}
		l.Lost(err, backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

// once opens the connection, LISTENs and passes on notifications until the
// connection fails or ctx ends.
func (l Listener) once(ctx context.Context, listening func()) error {
	cctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	conn, err := pgx.ConnectConfig(cctx, l.Config)
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.Channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	listening()
	defer l.Listening(ctx)()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		l.Notified(ctx, n.Payload)
	}
}
