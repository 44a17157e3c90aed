package mail_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestTwoSendersNeverSendOneMessageTwice: two instances' senders run at once
// on one outbox while 120 messages are written in 12 transactions: every
// message arrives exactly once.
func TestTwoSendersNeverSendOneMessageTwice(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	db := testenv.Postgres(t)
	server := testenv.StartSMTP(t, testenv.SMTPOptions{})
	var wg sync.WaitGroup
	for range 2 {
		s := newSender(t, db, server, stagemail.Options{Batch: 4})
		wg.Go(func() { s.Run(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	enqueueMany(t, db, 12, 10)
	testenv.Eventually(t, 30*time.Second, func() bool {
		left, err := stagemail.Outbox(ctx, db, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range left {
			if m.SentAt == nil {
				return false
			}
		}
		return len(left) == 120
	}, "every message sent")
	cancel()
	wg.Wait()
	_, seen := messageIDs(server.Received(t))
	eachOnce(t, seen, 120, "messages arrived (by Message-ID)")
}

// TestARefusedRecipientIsGivenUpAndAPutOffOneTriedAgain: in one pass, the
// server refuses one recipient for good (550) and puts another off (451):
// the first is given up, the second tried again after its backoff, and the
// messages around them go out in the same session.
func TestARefusedRecipientIsGivenUpAndAPutOffOneTriedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	refused, later := buyerEmail(), buyerEmail()
	server := testenv.StartSMTP(t, testenv.SMTPOptions{Reject: []string{refused}, Defer: []string{later}})
	first, last := buyerEmail(), buyerEmail()
	for _, to := range []string{first, refused, later, last} {
		enqueue(t, db, confirmation(to))
	}
	clock := testenv.NewClock(time.Now().Add(time.Second))
	s := newSender(t, db, server, stagemail.Options{Clock: clock.Now, Backoff: stagemail.Backoff{First: time.Minute, Most: time.Hour}})
	if p := sendDue(t, s); p.Sent != 2 || p.GaveUp != 1 || p.Deferred != 1 || p.Unreachable || p.Backlog != 1 {
		t.Fatalf("pass = %+v; want 2 sent, 1 given up, 1 put off and waiting", p)
	}
	got := server.Received(t)
	if len(got) != 2 || got[0].Header.Get("X-RcptTo") != first || got[1].Header.Get("X-RcptTo") != last {
		t.Fatalf("%d arrived; want the first's and the last's", len(got))
	}
	gaveUp, _ := stagemail.Outbox(ctx, db, refused)
	if len(gaveUp) != 1 || gaveUp[0].GaveUpAt == nil || gaveUp[0].SentAt != nil || !strings.Contains(gaveUp[0].LastError, "550") {
		t.Errorf("the refused recipient's message: %+v", gaveUp)
	}
	if p := sendDue(t, s); p.Deferred != 0 || p.Backlog != 1 {
		t.Errorf("before its backoff the put-off message was tried again: %+v", p)
	}
	clock.Add(time.Minute)
	if p := sendDue(t, s); p.Deferred != 1 || p.Backlog != 1 {
		t.Errorf("after its backoff: %+v; want it tried (and put off) again", p)
	}
	putOff, _ := stagemail.Outbox(ctx, db, later)
	if len(putOff) != 1 || putOff[0].Attempts != 2 || putOff[0].SentAt != nil || putOff[0].GaveUpAt != nil || !strings.Contains(putOff[0].LastError, "451") {
		t.Errorf("the put-off message: %+v", putOff)
	}
}

// TestACrashBetweenTheServersOKAndTheMarkSendsItOnceMoreWithItsMessageID is
// the one way a message goes out twice: the sender dies after the server's
// 250 and before it marks the message sent. Another sender takes it only once
// the dead one's claim has lapsed, and sends it once more, with the same
// Message-ID (a reader's client shows it once); then never again.
func TestACrashBetweenTheServersOKAndTheMarkSendsItOnceMoreWithItsMessageID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, server, _ := queued(t, testenv.SMTPOptions{})
	clock := testenv.NewClock(time.Now().Add(time.Second))
	crashed := errors.New("killed")
	dying := newSender(t, db, server, stagemail.Options{Clock: clock.Now})
	dying.AfterTaken(func(int64) error { return crashed })
	if _, err := dying.SendDue(ctx); !errors.Is(err, crashed) {
		t.Fatalf("the dying sender's pass: %v", err)
	}
	next := newSender(t, db, server, stagemail.Options{Clock: clock.Now})
	if p := sendDue(t, next); p.Sent != 0 || p.Backlog != 1 {
		t.Fatalf("while the dead sender's claim holds: %+v; want nothing sent", p)
	}
	clock.Add(next.Lease())
	if p := sendDue(t, next); p.Sent != 1 || p.Backlog != 0 {
		t.Fatalf("after the claim lapsed: %+v; want it sent", p)
	}
	clock.Add(next.Lease())
	sendDue(t, next)
	got := server.Received(t)
	if len(got) != 2 || got[0].Header.Get("Message-Id") != got[1].Header.Get("Message-Id") {
		t.Fatalf("%d arrived; want the message twice with one Message-ID", len(got))
	}
}
