package mail_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// password is a login's password that must never show: not in a log line,
// not in the outbox's last_error.
const password = "pw-Zq8!never-shown"

// TestStartTLSAndALoginAreUsedAndThePasswordNeverShows: a server offering
// STARTTLS and asking for a login gets the message over TLS, logged in. A
// wrong password makes an outage of "smtp" and a failed try; neither the
// log (the start's line included, which names the server) nor the outbox's
// last error holds the password.
func TestStartTLSAndALoginAreUsedAndThePasswordNeverShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, server, to := queued(t, testenv.SMTPOptions{TLS: true, User: "stagedoor", Password: password})
	if p := sendDue(t, newSender(t, db, server, stagemail.Options{})); p.Sent != 1 {
		t.Fatalf("pass = %+v; want it sent", p)
	}
	got := server.Received(t)
	if len(got) != 1 || got[0].Header.Get("X-Test-TLS") != "yes" || got[0].Header.Get("X-Test-Login") != "stagedoor" {
		t.Fatalf("%d arrived; want 1, over TLS (STARTTLS), logged in as stagedoor", len(got))
	}

	wrong := strings.Replace(server.URL(), url.QueryEscape(password), url.QueryEscape(password+"-wrong"), 1)
	if wrong == server.URL() {
		t.Fatalf("the test's URL %s does not hold the password", server.URL())
	}
	logs := &testenv.LogBuffer{}
	s := newSender(t, db, server, stagemail.Options{SMTPURL: wrong, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	enqueue(t, db, confirmation(to))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.Run(runCtx); close(done) }()
	var queued []stagemail.Queued
	testenv.Eventually(t, 10*time.Second, func() bool {
		var err error
		queued, err = stagemail.Outbox(ctx, db, to)
		return err == nil && len(queued) == 2 && queued[1].Attempts > 0 &&
			strings.Contains(logs.String(), `"dependency unavailable","dependency":"smtp"`)
	}, "a failed try of the message, and an outage of smtp in the log")
	stop()
	<-done
	if last := queued[1]; last.SentAt != nil || !strings.Contains(last.LastError, "535") {
		t.Errorf("the message after the wrong password: sent %v, %d tries, last error %q; want a failed try saying 535", last.SentAt, last.Attempts, last.LastError)
	}
	for _, where := range []string{logs.String(), queued[1].LastError} {
		if strings.Contains(where, "pw-Zq8") || strings.Contains(where, url.QueryEscape("pw-Zq8")) {
			t.Errorf("the password shows:\n%s", where)
		}
	}
	if !strings.Contains(logs.String(), `"smtp":"smtp://stagedoor:xxxxx@`+server.Addr+`"`) {
		t.Errorf("the start's line does not name the server with its password hidden:\n%s", logs)
	}
}

// TestImplicitTLS: smtps:// speaks TLS from the first byte.
func TestImplicitTLS(t *testing.T) {
	t.Parallel()
	db, server, _ := queued(t, testenv.SMTPOptions{Implicit: true})
	if !strings.HasPrefix(server.URL(), "smtps://") {
		t.Fatalf("URL %s", server.URL())
	}
	if p := sendDue(t, newSender(t, db, server, stagemail.Options{})); p.Sent != 1 {
		t.Fatalf("pass = %+v; want it sent", p)
	}
	if got := server.Received(t); len(got) != 1 || got[0].Header.Get("X-Test-TLS") != "yes" {
		t.Fatalf("%d arrived; want 1, over TLS", len(got))
	}
}

// TestWithoutAMailServerMessagesWaitCounted: with no STAGEDOOR_SMTP_URL the
// sender sends nothing; the messages stay in the outbox, counted in the
// backlog's gauges.
func TestWithoutAMailServerMessagesWaitCounted(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	enqueue(t, db, confirmation(buyerEmail()), confirmation(buyerEmail()))
	reg := prometheus.NewRegistry()
	clock := testenv.NewClock(time.Now().Add(time.Minute))
	s := newSender(t, db, nil, stagemail.Options{Registerer: reg, Clock: clock.Now})
	if p := sendDue(t, s); p.Sent != 0 || p.Backlog != 2 {
		t.Fatalf("pass = %+v; want nothing sent, 2 waiting", p)
	}
	if n, age := metric(t, reg, "stagedoor_mail_outbox_backlog", ""), metric(t, reg, "stagedoor_mail_outbox_oldest_unsent_seconds", ""); n != 2 || age < 59 {
		t.Errorf("backlog %v, oldest %v s; want 2, about a minute", n, age)
	}
}

// TestTheJanitorPurgesSentMessagesAfterAWeek: a message sent over
// SentRetention ago, or given up over GaveUpRetention ago, is deleted; one
// sent lately, one given up lately and one unsent are kept.
func TestTheJanitorPurgesSentMessagesAfterAWeek(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	for range 5 {
		enqueue(t, db, confirmation(buyerEmail()))
	}
	all, err := stagemail.Outbox(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	set := func(id int64, column string, at time.Time) {
		if _, err := db.Exec(ctx, `UPDATE mail_outbox SET `+column+` = $2 WHERE id = $1`, id, at); err != nil {
			t.Fatal(err)
		}
	}
	set(all[0].ID, "sent_at", now.Add(-stagemail.SentRetention-time.Hour))    // purged
	set(all[1].ID, "sent_at", now.Add(-stagemail.SentRetention+time.Hour))    // kept
	set(all[2].ID, "gave_up_at", now.Add(-stagemail.SentRetention-time.Hour)) // kept: given up a week ago
	set(all[3].ID, "gave_up_at", now.Add(-stagemail.GaveUpRetention-time.Hour))
	s := newSender(t, db, nil, stagemail.Options{})
	if n, err := s.PurgeSent(ctx, 1); err != nil || n != 1 {
		t.Fatalf("the first batch of one purged %d (%v)", n, err)
	}
	if n, err := s.PurgeSent(ctx, 10); err != nil || n != 1 {
		t.Fatalf("the next batch purged %d (%v); want the one left", n, err)
	}
	left, _ := stagemail.Outbox(ctx, db, "")
	if len(left) != 3 || left[0].ID != all[1].ID || left[1].ID != all[2].ID || left[2].ID != all[4].ID {
		t.Errorf("left %d messages: %+v", len(left), left)
	}
}
