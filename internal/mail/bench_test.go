package mail_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// BenchmarkRender: writing one order's confirmation of two tickets (two QR
// images) as a message.
func BenchmarkRender(b *testing.B) {
	r, err := stagemail.NewRenderer(testFrom, testPublic)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(confirmation("ada@example.com"))
	m := stagemail.Queued{ID: 1, MessageID: ids.New(), Kind: stagemail.KindOrderConfirmed, To: "ada@example.com", Notice: body, CreatedAt: time.Now()}
	for b.Loop() {
		if _, err := r.Render(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendingTheOutbox: messages a second one Sender sends to the real
// SMTP server (aiosmtpd, itself the slower of the two), 200 cancellations (no
// image to draw) or 50 confirmations of two tickets (two QR images each) a run.
func BenchmarkSendingTheOutbox(b *testing.B) {
	for _, c := range []struct {
		name   string
		n      int
		notice func(string) stagemail.Notice
	}{
		{"plain", 200, func(to string) stagemail.Notice { return cancellation(to) }},
		{"two_qr_codes", 50, func(to string) stagemail.Notice { return confirmation(to) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := testenv.Postgres(b)
			server := testenv.StartSMTP(b, testenv.SMTPOptions{})
			s, err := stagemail.NewSender(db, stagemail.Options{SMTPURL: server.URL(), From: testFrom, PublicURL: testPublic})
			if err != nil {
				b.Fatal(err)
			}
			sent := 0
			var took time.Duration
			for b.Loop() {
				b.StopTimer()
				var notices []stagemail.Notice
				for range c.n {
					notices = append(notices, c.notice(buyerEmail()))
				}
				enqueueB(b, db, notices...)
				b.StartTimer()
				start := time.Now()
				for {
					p, err := s.SendDue(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					sent += p.Sent
					if p.Backlog == 0 {
						break
					}
				}
				took += time.Since(start)
			}
			b.ReportMetric(float64(sent)/took.Seconds(), "messages/s")
		})
	}
}
