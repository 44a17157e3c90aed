package mail_test

import (
	"context"
	"sync"
	"testing"
	"time"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestRacingClaimsShareNoMessage: eight senders claim batches of one outbox
// at once, as instances would if the advisory lock did not keep them apart
// (SKIP LOCKED, and a claim that has not lapsed): each of 200 messages is
// claimed by exactly one of them.
func TestRacingClaimsShareNoMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	enqueueMany(t, db, 20, 10)
	now := time.Now().Add(time.Second)
	var mu sync.Mutex
	claimed := map[int64]int{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			<-start
			for {
				batch, err := stagemail.Claim(ctx, db, now, time.Hour, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(batch) == 0 {
					return
				}
				mu.Lock()
				for _, m := range batch {
					claimed[m.ID]++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	eachOnce(t, claimed, 200, "messages claimed")
}

// TestOnlyTheLockHolderSends: while another instance holds the sender's
// advisory lock, a pass sends nothing and returns at once; once it is free,
// the pass sends.
func TestOnlyTheLockHolderSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, server, _ := queued(t, testenv.SMTPOptions{})
	other, err := db.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1)`, stagemail.SenderLock); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, db, server, stagemail.Options{})
	if p := sendDue(t, s); p.Sent != 0 || len(server.Received(t)) != 0 {
		t.Fatalf("with the lock held elsewhere: %+v", p)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1)`, stagemail.SenderLock); err != nil {
		t.Fatal(err)
	}
	if p := sendDue(t, s); p.Sent != 1 || len(server.Received(t)) != 1 {
		t.Fatalf("with the lock free: %+v", p)
	}
}
