package mail

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The SQL of the outbox (mail.go and sender.go have the rules).

// Querier is a pool, a connection or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insert writes one message in tx. The notice travels as text cast to jsonb:
// behind a transaction pooler statements are not described first, and pgx
// would send bytes as bytea.
func insert(ctx context.Context, tx pgx.Tx, messageID, kind, recipient string, notice []byte) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO mail_outbox (message_id, kind, recipient, notice) VALUES ($1, $2, $3, $4::text::jsonb)`,
		messageID, kind, recipient, string(notice))
	return err
}

// Queued is a message of the outbox, as a Sender takes it and as tests and
// operators read it.
type Queued struct {
	ID        int64
	MessageID string // the Message-ID's left part
	Kind      string
	To        string
	Notice    json.RawMessage
	CreatedAt time.Time
	Attempts  int
	LastError string
	SentAt    *time.Time
	GaveUpAt  *time.Time
}

const queuedColumns = `id, message_id::text, kind, recipient, notice, created_at, attempts, coalesce(last_error, ''), sent_at, gave_up_at`

func scanQueued(row pgx.CollectableRow) (Queued, error) {
	var m Queued
	err := row.Scan(&m.ID, &m.MessageID, &m.Kind, &m.To, &m.Notice, &m.CreatedAt, &m.Attempts, &m.LastError, &m.SentAt, &m.GaveUpAt)
	return m, err
}

// Outbox lists the messages to recipient (every one when it is empty) in the
// order they were written, sent or not, through q (a pool or a transaction):
// what a test or an operator asks to see whether a notice was written and sent.
func Outbox(ctx context.Context, q Querier, recipient string) ([]Queued, error) {
	rows, err := q.Query(ctx, `SELECT `+queuedColumns+` FROM mail_outbox
		WHERE $1 = '' OR recipient = $1 ORDER BY id`, recipient)
	if err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanQueued)
	if err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	return out, nil
}

// claim takes up to limit messages due at now, in order, for this sender
// until claimedUntil: no other sender takes them before then. Rows another
// sender is claiming at this moment are skipped (SKIP LOCKED), and rows
// whose claim has not lapsed are not due; so two senders claiming at once get
// no message in common. The ids of skip are left alone (sent, not yet marked).
func claim(ctx context.Context, q Querier, now, claimedUntil time.Time, limit int, skip []int64) ([]Queued, error) {
	rows, err := q.Query(ctx, `
		UPDATE mail_outbox SET claimed_until = $2
		WHERE id IN (
		    SELECT id FROM mail_outbox
		    WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= $1
		      AND (claimed_until IS NULL OR claimed_until <= $1) AND id <> ALL(coalesce($4::bigint[], '{}'))
		    ORDER BY id LIMIT $3
		    FOR UPDATE SKIP LOCKED)
		RETURNING `+queuedColumns, now, claimedUntil, limit, skip)
	if err != nil {
		return nil, err
	}
	batch, err := pgx.CollectRows(rows, scanQueued)
	// RETURNING keeps no order: the batch goes out in the order written.
	slices.SortFunc(batch, func(a, b Queued) int { return cmp.Compare(a.ID, b.ID) })
	return batch, err
}

// markSent records that the server took message id (its 250 to DATA).
func markSent(ctx context.Context, q Querier, id int64, at time.Time) error {
	_, err := q.Exec(ctx, `
		UPDATE mail_outbox SET sent_at = $2, attempts = attempts + 1, last_error = NULL, claimed_until = NULL
		WHERE id = $1 AND sent_at IS NULL`, id, at)
	return err
}

// retryLater records a failed try of each message of ids and gives up the
// claim: next tried at now plus the backoff of its attempts so far.
func retryLater(ctx context.Context, q Querier, ids []int64, now time.Time, b Backoff, why string) error {
	_, err := q.Exec(ctx, `
		UPDATE mail_outbox
		SET attempts = attempts + 1, last_error = $3, claimed_until = NULL,
		    next_attempt_at = $2::timestamptz + least($4::bigint * power(2, least(attempts, 30)), $5::bigint) * interval '1 microsecond'
		WHERE id = ANY($1::bigint[]) AND sent_at IS NULL`,
		ids, now, why, b.First.Microseconds(), b.Most.Microseconds())
	return err
}

// giveUp records that message id will never be sent: the server refused it
// for good, or it cannot be written.
func giveUp(ctx context.Context, q Querier, id int64, now time.Time, why string) error {
	_, err := q.Exec(ctx, `
		UPDATE mail_outbox SET gave_up_at = $2, attempts = attempts + 1, last_error = $3, claimed_until = NULL
		WHERE id = $1 AND sent_at IS NULL`, id, now, why)
	return err
}

// release gives up the claim on messages not tried: they are due again at once.
func release(ctx context.Context, q Querier, ids []int64) error {
	_, err := q.Exec(ctx, `UPDATE mail_outbox SET claimed_until = NULL WHERE id = ANY($1::bigint[]) AND sent_at IS NULL`, ids)
	return err
}

// backlog counts the messages not sent and not given up, and when the oldest
// of them was written (zero when there is none).
func backlog(ctx context.Context, q Querier) (n int64, oldest time.Time, err error) {
	var at *time.Time
	err = q.QueryRow(ctx, `SELECT count(*), min(created_at) FROM mail_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL`).Scan(&n, &at)
	if at != nil {
		oldest = *at
	}
	return n, oldest, err
}

// purge deletes up to batch messages sent before sentBefore or given up before
// gaveUpBefore.
func purge(ctx context.Context, q Querier, sentBefore, gaveUpBefore time.Time, batch int) (int64, error) {
	tag, err := q.Exec(ctx, `
		DELETE FROM mail_outbox WHERE id IN (
		    (SELECT id FROM mail_outbox WHERE sent_at < $1 ORDER BY sent_at LIMIT $3)
		    UNION ALL
		    (SELECT id FROM mail_outbox WHERE gave_up_at < $2 ORDER BY gave_up_at LIMIT $3)
		    LIMIT $3)`, sentBefore, gaveUpBefore, batch)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
