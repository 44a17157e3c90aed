package mail_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestANoticeIsWrittenOnlyWithItsTransaction: a notice enqueued in a
// transaction that rolls back leaves nothing in the outbox; one whose
// transaction commits is there, a transfer as two messages (giver, receiver).
func TestANoticeIsWrittenOnlyWithItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	n := confirmation(buyerEmail())
	refused := errors.New("the checkout failed after the notice was written")
	if err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := stagemail.Enqueue(ctx, tx, n); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatal(err)
	}
	if got, err := stagemail.Outbox(ctx, db, ""); err != nil || len(got) != 0 {
		t.Fatalf("after a rollback the outbox holds %d messages (%v); want none", len(got), err)
	}
	transfer := stagemail.TicketTransferred{From: n.To, To: stagemail.Recipient{Name: "Bob", Email: buyerEmail()}, Event: n.Event, Ticket: n.Tickets[0]}
	enqueue(t, db, n, transfer)
	got, err := stagemail.Outbox(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ kind, to string }{
		{stagemail.KindOrderConfirmed, n.To.Email}, {stagemail.KindTicketGiven, n.To.Email}, {stagemail.KindTicketReceived, transfer.To.Email},
	}
	if len(got) != len(want) {
		t.Fatalf("the outbox holds %d messages; want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].To != w.to || got[i].SentAt != nil || got[i].Attempts != 0 {
			t.Errorf("message %d = %s to %s (sent %v, %d attempts); want %s to %s, unsent", i, got[i].Kind, got[i].To, got[i].SentAt, got[i].Attempts, w.kind, w.to)
		}
	}
	if mine, err := stagemail.Outbox(ctx, db, transfer.To.Email); err != nil || len(mine) != 1 || mine[0].Kind != stagemail.KindTicketReceived {
		t.Errorf("the receiver's messages: %+v, %v", mine, err)
	}
}
