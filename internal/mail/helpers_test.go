package mail_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

const (
	testFrom   = "Stagedoor <tickets@stagedoor.test>"
	testPublic = "https://tickets.stagedoor.test"
)

// enqueue writes the notices in one transaction, as their callers do.
func enqueue(t *testing.T, db *pgxpool.Pool, notices ...stagemail.Notice) {
	enqueueB(t, db, notices...)
}

// enqueueB is enqueue for tests and benchmarks.
func enqueueB(t testing.TB, db *pgxpool.Pool, notices ...stagemail.Notice) {
	t.Helper()
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, n := range notices {
			if err := stagemail.Enqueue(ctx, tx, n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// queued is a database of the test's own with a confirmation queued to a
// new address (returned), and a mail server of o.
func queued(t *testing.T, o testenv.SMTPOptions) (*pgxpool.Pool, *testenv.SMTPServer, string) {
	t.Helper()
	db := testenv.Postgres(t)
	server := testenv.StartSMTP(t, o)
	to := buyerEmail()
	enqueue(t, db, confirmation(to))
	return db, server, to
}

// enqueueMany writes txs transactions of per cancellations each, each to an
// address of its own.
func enqueueMany(t *testing.T, db *pgxpool.Pool, txs, per int) {
	t.Helper()
	for range txs {
		var notices []stagemail.Notice
		for range per {
			notices = append(notices, cancellation(buyerEmail()))
		}
		enqueue(t, db, notices...)
	}
}

// eachOnce fails t unless counts counts want things (what they are: what),
// each once.
func eachOnce[K comparable](t *testing.T, counts map[K]int, want int, what string) {
	t.Helper()
	if len(counts) != want {
		t.Errorf("%d %s; want %d", len(counts), what, want)
	}
	for k, n := range counts {
		if n != 1 {
			t.Errorf("%v: %d times; want once", k, n)
		}
	}
}

// newSender is a Sender of db's outbox through server (nil: none), polling
// every 20 ms, with o's other fields.
func newSender(t *testing.T, db *pgxpool.Pool, server *testenv.SMTPServer, o stagemail.Options) *stagemail.Sender {
	t.Helper()
	o.From, o.PublicURL = testFrom, testPublic
	o.Every = 20 * time.Millisecond
	if server != nil {
		if o.SMTPURL == "" {
			o.SMTPURL = server.URL()
		}
		if server.RootCAs != nil {
			o.TLS = testTLS(server)
		}
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	s, err := stagemail.NewSender(db, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sendDue runs one pass and fails the test on its error.
func sendDue(t *testing.T, s *stagemail.Sender) stagemail.Pass {
	t.Helper()
	p, err := s.SendDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// confirmation is an order of two seated tickets for "Night" to email.
func confirmation(email string) stagemail.OrderConfirmed {
	return stagemail.OrderConfirmed{
		To:      stagemail.Recipient{Name: "Ada Lovelace", Email: email},
		OrderID: ids.New(),
		Event: stagemail.Event{ID: ids.New(), Name: "Night at the Opera", Venue: "Royal Hall",
			StartsAt: time.Date(2031, 6, 14, 19, 30, 0, 0, time.UTC)},
		Tickets: []stagemail.Ticket{
			{ID: ids.New(), Section: "Floor", Row: "A", Number: 1, Code: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"},
			{ID: ids.New(), Section: "Floor", Row: "A", Number: 2, Code: "QRSTUVWXYZ234567ABCDEFGHIJKLMNOP"},
		},
		TotalCents: 5000, Currency: "EUR",
	}
}

// cancellation is a cheap message to email (no QR image to draw), for the
// tests of sending many.
func cancellation(email string) stagemail.EventCancelled {
	return stagemail.EventCancelled{To: stagemail.Recipient{Name: "Ada", Email: email}, OrderID: ids.New(),
		Event:       stagemail.Event{ID: ids.New(), Name: "Night", Venue: "Hall", StartsAt: time.Date(2031, 6, 14, 19, 30, 0, 0, time.UTC)},
		RefundCents: 2500, Currency: "EUR"}
}

// buyerEmail is an address of the test's own.
func buyerEmail() string { return "buyer-" + ids.New()[:8] + "@example.com" }

// testTLS trusts the test server's certificate.
func testTLS(s *testenv.SMTPServer) *tls.Config {
	return &tls.Config{RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12}
}
