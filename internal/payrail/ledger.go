package payrail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Status is the outcome of a charge.
type Status string

// The outcomes a charge can have.
const (
	StatusSucceeded Status = "succeeded"
	StatusDeclined  Status = "declined"
)

// The test tokens Payrail knows. Any other token is declined.
const (
	TokenVisa     = "tok_visa"     // succeeds
	TokenDeclined = "tok_declined" // declines with 402
	TokenError    = "tok_error"    // answers 500 and records nothing
)

// Charge is one recorded outcome: a succeeded or a declined charge. Requests
// answered 500 record nothing.
type Charge struct {
	ID             string    `json:"id"`
	Status         Status    `json:"status"`
	AmountCents    int64     `json:"amount_cents"`
	Currency       string    `json:"currency"`
	IdempotencyKey string    `json:"idempotency_key"`
	DeclineReason  string    `json:"decline_reason,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	// RecordedAt is when the charge became visible to lookups and listings:
	// CreatedAt, unless Config.RecordDelay made it later.
	RecordedAt time.Time `json:"recorded_at"`
	// RefundedCents is how much of AmountCents was given back, by every
	// refund together: 0 to AmountCents.
	RefundedCents int64 `json:"refunded_cents"`
	// Refunds are the charge's refunds, in the order they were made; none is
	// left out.
	Refunds []Refund `json:"refunds,omitempty"`
}

// Refund gives some or all of a succeeded charge's amount back. A charge has
// any number of them, together at most its amount.
type Refund struct {
	ID       string `json:"id"`
	ChargeID string `json:"charge_id"`
	// IdempotencyKey is the refunded charge's.
	IdempotencyKey string `json:"idempotency_key"`
	// RefundKey is the Idempotency-Key of the request that made the refund;
	// empty for the charge's one refund asked for without a key.
	RefundKey   string    `json:"refund_key,omitempty"`
	AmountCents int64     `json:"amount_cents"`
	Currency    string    `json:"currency"`
	CreatedAt   time.Time `json:"created_at"`
}

// Coverage says which charge attempts the ledger can answer for: every request
// that arrived between Since and CompleteThrough is recorded and visible, so a
// lookup that finds no charge for such a request means there is none.
type Coverage struct {
	// Since is when this ledger began recording (its first start).
	Since time.Time `json:"ledger_since"`
	// CompleteThrough is the newest moment up to which every charge is
	// visible: now, unless some charges are still waiting to be recorded.
	CompleteThrough time.Time `json:"complete_through"`
}

// schema is the ledger's tables, in a schema of Payrail's own: Stagedoor never
// reads or writes it (it asks Payrail over HTTP), but an operator can join it
// with Stagedoor's orders (docs/invariant.sql). Every statement is idempotent.
const schema = `
CREATE SCHEMA IF NOT EXISTS payrail;
CREATE TABLE IF NOT EXISTS payrail.ledger (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO payrail.ledger DEFAULT VALUES ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS payrail.charges (
    id              text PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE,
    status          text NOT NULL CHECK (status IN ('succeeded', 'declined')),
    amount_cents    bigint NOT NULL CHECK (amount_cents >= 0),
    currency        text NOT NULL,
    decline_reason  text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    recorded_at     timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_recorded_at ON payrail.charges (recorded_at, id);
ALTER TABLE payrail.charges ADD COLUMN IF NOT EXISTS refunded_cents bigint NOT NULL DEFAULT 0
    CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents AND (refunded_cents = 0 OR status = 'succeeded'));
CREATE TABLE IF NOT EXISTS payrail.refunds (
    id           text PRIMARY KEY,
    charge_id    text NOT NULL REFERENCES payrail.charges (id),
    refund_key   text NOT NULL, -- '' for the one refund asked for without an Idempotency-Key
    amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (charge_id, refund_key)
);
CREATE INDEX IF NOT EXISTS refunds_created_at ON payrail.refunds (created_at, id);
-- A ledger from before partial refunds kept a charge's one whole refund on
-- its row: it moves to payrail.refunds, as a refund asked for without a key.
DO $$ BEGIN
    IF EXISTS (SELECT FROM information_schema.columns
               WHERE table_schema = 'payrail' AND table_name = 'charges' AND column_name = 'refund_id') THEN
        INSERT INTO payrail.refunds (id, charge_id, refund_key, amount_cents, created_at)
        SELECT refund_id, id, '', amount_cents, refunded_at FROM payrail.charges WHERE refund_id IS NOT NULL
        ON CONFLICT DO NOTHING;
        UPDATE payrail.charges SET refunded_cents = amount_cents WHERE refund_id IS NOT NULL;
        ALTER TABLE payrail.charges DROP COLUMN refund_id, DROP COLUMN refunded_at;
    END IF;
END $$;`

// schemaLock serializes the schema statements of Payrails starting at once.
const schemaLock = 0x5eed_7a11

// ledger keeps charges in PostgreSQL, so that a restart forgets nothing.
type ledger struct {
	db *pgxpool.Pool
}

func openLedger(ctx context.Context, db *pgxpool.Pool) (ledger, error) {
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return ledger{}, fmt.Errorf("payrail: ledger schema: %w", err)
	}
	return ledger{db: db}, nil
}

// outcome says how a charge request was settled by ledger.settle.
type outcome int

const (
	outcomeNew       outcome = iota // a new charge was recorded
	outcomeReplayed                 // the key already had a charge; it is returned
	outcomeFailed                   // a 500: nothing recorded
	outcomeAbandoned                // its client went away before its turn: nothing recorded
)

// decision is what decide made of a request with a new key: out is
// outcomeNew for a charge (charge, recorded recordAfter after its creation),
// else outcomeFailed or outcomeAbandoned (nothing is recorded).
type decision struct {
	out         outcome
	charge      Charge
	recordAfter time.Duration
}

const chargeColumns = `id, status, amount_cents, currency, idempotency_key, coalesce(decline_reason, ''),
	created_at, recorded_at, refunded_cents`

// coverageLock orders the making of charges and the reads that vouch for what
// the ledger covers. A charge is made holding it shared, from before its
// created_at is read off the clock until it commits; a read that states a
// coverage holds it exclusively, so it starts only once every charge in the
// making is written and visible, and a charge made after it has a later
// created_at. Without it, a charge begun but not yet committed is invisible to
// a lookup that claims to cover its time (seen: a released order whose charge
// Payrail then declined).
const coverageLock = 0x5eed_c0e5

// settle returns the charge already recorded for key, or else calls decide and
// records the charge it returns, unless decide reports a failure or an
// abandoned request (decision.out). It holds a lock on the key while it does, so that under
// a race exactly one request per key records a charge and the others replay
// it, and a failure is answered only when the key has no charge.
func (l ledger) settle(ctx context.Context, key string, decide func() decision) (Charge, outcome, error) {
	var c Charge
	out := outcomeNew
	err := pgx.BeginFunc(ctx, l.db, func(tx pgx.Tx) error {
		// The coverage lock first, then the key's: always in this order.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, coverageLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
			return err
		}
		found, err := scanCharge(tx.QueryRow(ctx, `SELECT `+chargeColumns+` FROM payrail.charges WHERE idempotency_key = $1`, key))
		if err == nil {
			c, out = found, outcomeReplayed
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		d := decide()
		if out = d.out; out != outcomeNew {
			return nil
		}
		// created_at is read off the clock now, with the locks held: not now(),
		// the transaction's start, which may precede a lookup that could not see
		// this charge.
		c, err = scanCharge(tx.QueryRow(ctx, `
			WITH made AS (SELECT clock_timestamp() AS at)
			INSERT INTO payrail.charges (id, idempotency_key, status, amount_cents, currency, decline_reason, created_at, recorded_at)
			SELECT $1, $2, $3, $4, $5, nullif($6, ''), made.at, made.at + $7::bigint * interval '1 microsecond' FROM made
			RETURNING `+chargeColumns,
			newID("ch_"), key, d.charge.Status, d.charge.AmountCents, d.charge.Currency, d.charge.DeclineReason,
			d.recordAfter.Microseconds()))
		return err
	})
	if err == nil && out == outcomeReplayed {
		replayed := []Charge{c}
		err = l.withRefunds(ctx, replayed)
		c = replayed[0]
	}
	if err != nil {
		return Charge{}, 0, fmt.Errorf("payrail: settle charge: %w", err)
	}
	return c, out, nil
}

// vouch runs read in a transaction holding the coverage lock exclusively, with
// at: the database's clock once every charge in the making is written. What
// read finds recorded at or before at, and the coverage at at, agree.
func (l ledger) vouch(ctx context.Context, read func(tx pgx.Tx, at time.Time) error) error {
	return pgx.BeginFunc(ctx, l.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, coverageLock); err != nil {
			return err
		}
		var at time.Time
		if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
			return err
		}
		return read(tx, at)
	})
}

// byIdempotencyKey returns the recorded charge of key, if any, and what the
// ledger covers.
func (l ledger) byIdempotencyKey(ctx context.Context, key string) (Charge, bool, Coverage, error) {
	var (
		c     Charge
		found bool
		cov   Coverage
	)
	err := l.vouch(ctx, func(tx pgx.Tx, at time.Time) error {
		var err error
		c, err = scanCharge(tx.QueryRow(ctx, `
			SELECT `+chargeColumns+` FROM payrail.charges WHERE idempotency_key = $1 AND recorded_at <= $2`, key, at))
		switch {
		case err == nil:
			found = true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("payrail: find charge: %w", err)
		}
		cov, err = coverageAt(ctx, tx, at)
		return err
	})
	if err != nil || !found {
		return Charge{}, false, cov, err
	}
	withRefunds := []Charge{c}
	err = l.withRefunds(ctx, withRefunds)
	return withRefunds[0], err == nil, cov, err
}

// coveredList reads what the ledger covers now, and then the charges recorded
// after the position (recordedAt, id), up to limit, in the order they were
// recorded: every charge the coverage claims is among them or before them.
func (l ledger) coveredList(ctx context.Context, recordedAt time.Time, id string, limit int) (Coverage, []Charge, error) {
	var (
		cov     Coverage
		charges []Charge
	)
	err := l.vouch(ctx, func(tx pgx.Tx, at time.Time) error {
		var err error
		if cov, err = coverageAt(ctx, tx, at); err != nil {
			return err
		}
		charges, err = listAfter(ctx, tx, at, recordedAt, id, limit)
		return err
	})
	if err != nil {
		return Coverage{}, nil, err
	}
	return cov, charges, l.withRefunds(ctx, charges)
}

// coverageAt reads what the ledger covered at at.
func coverageAt(ctx context.Context, tx pgx.Tx, at time.Time) (Coverage, error) {
	var cov Coverage
	err := tx.QueryRow(ctx, `
		SELECT (SELECT started_at FROM payrail.ledger),
		       least($1::timestamptz, (SELECT min(created_at) FROM payrail.charges WHERE recorded_at > $1))`, at).
		Scan(&cov.Since, &cov.CompleteThrough)
	if err != nil {
		return Coverage{}, fmt.Errorf("payrail: ledger coverage: %w", err)
	}
	cov.Since, cov.CompleteThrough = cov.Since.UTC(), cov.CompleteThrough.UTC()
	return cov, nil
}

// listAfter returns up to limit charges recorded by at, after the position
// (recordedAt, id), in the order they were recorded.
func listAfter(ctx context.Context, tx pgx.Tx, at, recordedAt time.Time, id string, limit int) ([]Charge, error) {
	rows, err := tx.Query(ctx, `
		SELECT `+chargeColumns+` FROM payrail.charges
		WHERE (recorded_at, id) > ($1, $2) AND recorded_at <= $3
		ORDER BY recorded_at, id LIMIT $4`, recordedAt, id, at, limit)
	if err != nil {
		return nil, fmt.Errorf("payrail: list charges: %w", err)
	}
	charges, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Charge, error) { return scanCharge(row) })
	if err != nil {
		return nil, fmt.Errorf("payrail: list charges: %w", err)
	}
	return charges, nil
}

// all returns every charge, recorded or not yet, in creation order, never nil.
func (l ledger) all(ctx context.Context) ([]Charge, error) {
	rows, err := l.db.Query(ctx, `SELECT `+chargeColumns+` FROM payrail.charges ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("payrail: all charges: %w", err)
	}
	charges, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Charge, error) { return scanCharge(row) })
	if err != nil {
		return nil, fmt.Errorf("payrail: all charges: %w", err)
	}
	if charges == nil {
		charges = []Charge{}
	}
	return charges, l.withRefunds(ctx, charges)
}

func scanCharge(row pgx.Row) (Charge, error) {
	var c Charge
	if err := row.Scan(&c.ID, &c.Status, &c.AmountCents, &c.Currency, &c.IdempotencyKey, &c.DeclineReason,
		&c.CreatedAt, &c.RecordedAt, &c.RefundedCents); err != nil {
		return Charge{}, err
	}
	c.CreatedAt, c.RecordedAt = c.CreatedAt.UTC(), c.RecordedAt.UTC()
	return c, nil
}

// newID returns prefix and 128 random bits in hex.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}
