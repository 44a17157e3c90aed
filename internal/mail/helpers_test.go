package mail_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
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

// buyerEmail is an address of the test's own.
func buyerEmail() string { return "buyer-" + ids.New()[:8] + "@example.com" }

// parts is a received message taken apart.
type parts struct {
	text, html string
	images     map[string][]byte // by Content-ID, without angle brackets
	types      []string          // every part's media type, depth first
}

// readParts takes a message apart: multipart/alternative of text/plain and
// text/html or multipart/related (text/html and images).
func readParts(t *testing.T, m *mail.Message) parts {
	t.Helper()
	p := parts{images: map[string][]byte{}}
	var walk func(mediaType string, params map[string]string, header map[string][]string, body io.Reader)
	walk = func(mediaType string, params map[string]string, header map[string][]string, body io.Reader) {
		p.types = append(p.types, mediaType)
		if strings.HasPrefix(mediaType, "multipart/") {
			r := multipart.NewReader(body, params["boundary"])
			for {
				part, err := r.NextPart() // decodes quoted-printable
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				mt, ps, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
				if err != nil {
					t.Fatal(err)
				}
				walk(mt, ps, part.Header, part)
			}
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		get := func(k string) string {
			if v := header[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		switch {
		case mediaType == "text/plain":
			p.text = string(raw)
		case mediaType == "text/html":
			p.html = string(raw)
		case mediaType == "image/png":
			if get("Content-Transfer-Encoding") != "base64" {
				t.Fatalf("an image is %q, not base64", get("Content-Transfer-Encoding"))
			}
			p.images[strings.Trim(get("Content-Id"), "<>")] = decodeBase64(t, raw)
		}
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	walk(mt, params, map[string][]string(m.Header), m.Body)
	return p
}

// testTLS trusts the test server's certificate.
func testTLS(s *testenv.SMTPServer) *tls.Config {
	return &tls.Config{RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12}
}

func decodeBase64(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	if err != nil {
		t.Fatalf("an image is no base64: %v", err)
	}
	return out
}
