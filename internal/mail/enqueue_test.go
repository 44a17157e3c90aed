package mail_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/conn"
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

// TestANoticeIsWrittenBehindATransactionPooler: through the pool Stagedoor
// opens for a transaction pooler (statements not described first, arguments
// sent as text), a notice is written as JSON and reads back whole.
func TestANoticeIsWrittenBehindATransactionPooler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := conn.PostgresPooler(ctx, testenv.DatabaseURL(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := confirmation(buyerEmail())
	enqueue(t, db, n)
	got, err := stagemail.Outbox(ctx, db, n.To.Email)
	if err != nil || len(got) != 1 {
		t.Fatalf("outbox: %+v, %v", got, err)
	}
	var back stagemail.OrderConfirmed
	if err := json.Unmarshal(got[0].Notice, &back); err != nil || back.OrderID != n.OrderID || len(back.Tickets) != 2 || back.Tickets[1].Code != n.Tickets[1].Code {
		t.Errorf("the notice reads back as %+v (%v)", back, err)
	}
}
