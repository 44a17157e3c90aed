package mail_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// metric reads one series of reg: name, and the value of its one label when
// it has one ("" when not).
func metric(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() != label {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s{%s}", name, label)
	return 0
}

// messageIDs are the Message-IDs of msgs, in order, and how often each came.
func messageIDs(msgs []*mail.Message) ([]string, map[string]int) {
	var order []string
	seen := map[string]int{}
	for _, m := range msgs {
		id := m.Header.Get("Message-Id")
		if seen[id]++; seen[id] == 1 {
			order = append(order, id)
		}
	}
	return order, seen
}

// TestMessagesQueuedWhileTheServerIsDownArriveOnceAfter: the mail server is
// killed, and stays away for a minute of the sender's clock while 20
// messages are written. The sender tries now and then, backing off (not at
// every pass), logs one outage of "smtp" rather than a line a try, and
// counts the failed tries and the backlog. Once the server is back, every
// message arrives exactly once, in the order written, and the outage ends.
func TestMessagesQueuedWhileTheServerIsDownArriveOnceAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, server, to := queued(t, testenv.SMTPOptions{})
	// The sender's clock, moved by hand, starts a little after the database's
	// clock that wrote the message.
	clock := testenv.NewClock(time.Now().Add(time.Second))
	logs := &testenv.LogBuffer{}
	reg := prometheus.NewRegistry()
	s := newSender(t, db, server, stagemail.Options{Clock: clock.Now, Registerer: reg,
		Logger:  slog.New(slog.NewJSONHandler(logs, nil)),
		Backoff: stagemail.Backoff{First: 2 * time.Second, Most: 20 * time.Second}})
	if p := sendDue(t, s); p.Sent != 1 {
		t.Fatalf("before the outage: %+v; want 1 sent", p)
	}

	server.Stop()
	down := clock.Now()
	for i := range 20 {
		n := cancellation(to)
		n.Event.Name = fmt.Sprintf("Night %02d", i)
		enqueue(t, db, n)
	}
	passes, tries := 0, 0
	for clock.Now().Sub(down) < time.Minute {
		p := sendDue(t, s)
		if p.Sent != 0 || p.Backlog != 20 {
			t.Fatalf("while the server is away: %+v; want nothing sent, 20 waiting", p)
		}
		if p.Unreachable {
			tries++
		}
		passes++
		clock.Add(time.Second)
	}
	// Backing off from 2 s, doubling to 20 s: tries at 0, 2, 6, 14, 30, 50 s.
	if tries < 4 || tries > 7 {
		t.Errorf("%d of %d passes tried the server in a minute; want a few, backing off", tries, passes)
	}
	if got := metric(t, reg, "stagedoor_mail_outbox_backlog", ""); got != 20 {
		t.Errorf("backlog gauge %v; want 20", got)
	}
	if got := metric(t, reg, "stagedoor_mail_outbox_oldest_unsent_seconds", ""); got < 55 {
		t.Errorf("oldest unsent %v s; want about a minute", got)
	}
	if got := metric(t, reg, "stagedoor_mail_failed_attempts_total", "unreachable"); got < float64(tries) {
		t.Errorf("failed attempts (unreachable) %v; want at least %d", got, tries)
	}
	if lines := strings.Count(logs.String(), `"dependency":"smtp"`); lines < 1 || lines > tries {
		t.Errorf("%d log lines of the smtp outage for %d failed tries; want an outage's few:\n%s", lines, tries, logs)
	}

	server.Start()
	for range 30 {
		clock.Add(time.Second)
		if p := sendDue(t, s); p.Backlog == 0 {
			break
		}
	}
	got := server.Received(t)
	order, seen := messageIDs(got)
	if len(got) != 21 || len(order) != 21 {
		t.Fatalf("%d messages arrived, %d distinct; want 21, each once: %v", len(got), len(order), seen)
	}
	for i, m := range got[1:] {
		if subject := decodeHeader(t, m.Header.Get("Subject")); subject != fmt.Sprintf("Cancelled: Night %02d", i) {
			t.Errorf("arrival %d is %q: not in the order written", i+1, subject)
		}
	}
	queued, err := stagemail.Outbox(ctx, db, to)
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, m := range queued[1:] {
		if m.SentAt == nil || m.LastError != "" {
			t.Errorf("message %d: sent %v after %d tries (last error %q)", m.ID, m.SentAt, m.Attempts, m.LastError)
		}
		if m.Attempts > 1 {
			tried++
		}
	}
	if tried == 0 {
		t.Error("no message records the tries that failed while the server was away")
	}
	if !strings.Contains(logs.String(), `"msg":"dependency available again","dependency":"smtp"`) {
		t.Errorf("the outage did not end in the log:\n%s", logs)
	}
	if got := metric(t, reg, "stagedoor_mail_sent_total", ""); got != 21 {
		t.Errorf("sent counter %v; want 21", got)
	}
}
