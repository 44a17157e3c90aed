package payrail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Errors of refunds: each answers 4xx and changes nothing.
var (
	errNoSuchCharge   = errors.New("no charge has this id")
	errNotRefundable  = errors.New("only a succeeded charge can be refunded")
	errNothingLeft    = errors.New("the charge is refunded in full: nothing is left to refund")
	errOverRefund     = errors.New("amount_cents is more than is left to refund of the charge")
	errRefundMismatch = errors.New("this Idempotency-Key made a refund of another amount")
)

const refundColumns = `r.id, r.charge_id, c.idempotency_key, r.refund_key, r.amount_cents, c.currency, r.created_at`

func scanRefund(row pgx.Row) (Refund, error) {
	var r Refund
	err := row.Scan(&r.ID, &r.ChargeID, &r.IdempotencyKey, &r.RefundKey, &r.AmountCents, &r.Currency, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

// refund makes the refund of the charge that key names (empty: the one
// refund asked for without a key), of amount cents (nil: all that is left of
// the charge), or returns it when key has made it already (created false).
// Refunds of one charge are made one at a time, under a lock on its row: they
// never give back more than it took. fail, called only when a new refund is
// about to be made, reports a failure to inject: nothing is made.
func (l ledger) refund(ctx context.Context, chargeID, key string, amount *int64, fail func() bool) (r Refund, created bool, err error) {
	err = pgx.BeginFunc(ctx, l.db, func(tx pgx.Tx) error {
		c, err := scanCharge(tx.QueryRow(ctx, `SELECT `+chargeColumns+` FROM payrail.charges WHERE id = $1 FOR UPDATE`, chargeID))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return errNoSuchCharge
		case err != nil:
			return err
		}
		r, err = scanRefund(tx.QueryRow(ctx, `
			SELECT `+refundColumns+` FROM payrail.refunds r JOIN payrail.charges c ON c.id = r.charge_id
			WHERE r.charge_id = $1 AND r.refund_key = $2`, chargeID, key))
		switch {
		case err == nil && amount != nil && *amount != r.AmountCents:
			return errRefundMismatch
		case err == nil:
			return nil // a replay
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		case c.Status != StatusSucceeded:
			return errNotRefundable
		}
		left := c.AmountCents - c.RefundedCents
		want := left
		if amount != nil {
			want = *amount
		}
		switch {
		case amount == nil && left == 0:
			return errNothingLeft
		case want > left:
			return errOverRefund
		case fail():
			return errInjected
		}
		if _, err := tx.Exec(ctx, `UPDATE payrail.charges SET refunded_cents = refunded_cents + $2 WHERE id = $1`, chargeID, want); err != nil {
			return err
		}
		r, err = scanRefund(tx.QueryRow(ctx, `
			WITH r AS (
			    INSERT INTO payrail.refunds (id, charge_id, refund_key, amount_cents) VALUES ($1, $2, $3, $4)
			    RETURNING *
			)
			SELECT `+refundColumns+` FROM r JOIN payrail.charges c ON c.id = r.charge_id`,
			newID("re_"), chargeID, key, want))
		created = err == nil
		return err
	})
	return r, created, err
}

// withRefunds fills the Refunds of the charges, in the order they were made.
func (l ledger) withRefunds(ctx context.Context, charges []Charge) error {
	var refunded []string
	at := make(map[string]int, len(charges))
	for i, c := range charges {
		if c.RefundedCents > 0 || c.AmountCents == 0 {
			refunded = append(refunded, c.ID)
			at[c.ID] = i
		}
	}
	if len(refunded) == 0 {
		return nil
	}
	rows, err := l.db.Query(ctx, `
		SELECT `+refundColumns+` FROM payrail.refunds r JOIN payrail.charges c ON c.id = r.charge_id
		WHERE r.charge_id = ANY($1) ORDER BY r.created_at, r.id`, refunded)
	if err != nil {
		return fmt.Errorf("payrail: read refunds: %w", err)
	}
	refunds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Refund, error) { return scanRefund(row) })
	if err != nil {
		return fmt.Errorf("payrail: read refunds: %w", err)
	}
	for _, r := range refunds {
		c := &charges[at[r.ChargeID]]
		c.Refunds = append(c.Refunds, r)
	}
	return nil
}

// refundsAfter returns up to limit refunds made after the one made at
// createdAt with id (zero values: from the first), in the order they were
// made.
func (l ledger) refundsAfter(ctx context.Context, createdAt time.Time, id string, limit int) ([]Refund, error) {
	rows, err := l.db.Query(ctx, `
		SELECT `+refundColumns+` FROM payrail.refunds r JOIN payrail.charges c ON c.id = r.charge_id
		WHERE (r.created_at, r.id) > ($1, $2)
		ORDER BY r.created_at, r.id LIMIT $3`, createdAt, id, limit)
	if err != nil {
		return nil, fmt.Errorf("payrail: list refunds: %w", err)
	}
	refunds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Refund, error) { return scanRefund(row) })
	if err != nil {
		return nil, fmt.Errorf("payrail: list refunds: %w", err)
	}
	return refunds, nil
}

// errInjected is a refund failed on purpose (Config.FailureRate): nothing
// was refunded.
var errInjected = errors.New("injected failure")

// decodeRefundRequest reads the optional body of POST /charges/{id}/refunds:
// none, or {"amount_cents": N} with N at least 1. Its errors are fit to show
// the client.
func decodeRefundRequest(w http.ResponseWriter, r *http.Request) (*int64, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, decodeError(err)
	}
	if strings.TrimSpace(string(raw)) == "" {
		return nil, nil
	}
	var body struct {
		AmountCents *int64 `json:"amount_cents"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, errors.New("request body must hold one JSON object")
	}
	switch {
	case body.AmountCents == nil:
		return nil, errors.New("amount_cents is required in a body (send no body to refund all that is left)")
	case *body.AmountCents < 1:
		return nil, errors.New("amount_cents must be at least 1")
	}
	return body.AmountCents, nil
}

func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	key := r.Header.Get("Idempotency-Key")
	if len(key) > MaxKeyLength {
		writeJSON(w, http.StatusBadRequest, errorBody("Idempotency-Key header must be at most 255 bytes"))
		return
	}
	amount, err := decodeRefundRequest(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(err.Error()))
		return
	}
	fail := func() bool { return s.cfg.FailureRate > 0 && s.roll() < s.cfg.FailureRate }
	// The ledger's work goes on if the client leaves: a refund is made when
	// its request arrives.
	refund, created, err := s.ledger.refund(context.WithoutCancel(r.Context()), id, key, amount, fail)
	status, body := http.StatusCreated, any(refund)
	lg := s.log.With("charge_id", id, "refund_key", key)
	switch {
	case errors.Is(err, errNoSuchCharge):
		status, body = http.StatusNotFound, errorBody(err.Error())
	case errors.Is(err, errNotRefundable), errors.Is(err, errNothingLeft), errors.Is(err, errOverRefund):
		status, body = http.StatusConflict, errorBody(err.Error())
	case errors.Is(err, errRefundMismatch):
		status, body = http.StatusUnprocessableEntity, errorBody(err.Error())
	case errors.Is(err, errInjected):
		lg.Warn("payrail: refund failed with 500; nothing refunded")
		status, body = http.StatusInternalServerError, errorBody("payrail: internal error (injected failure); nothing was refunded")
	case err != nil:
		lg.Error("payrail: ledger unavailable; refund outcome unknown", "error", err)
		status, body = http.StatusServiceUnavailable, errorBody("payrail: ledger unavailable; the outcome is unknown: retry with the same Idempotency-Key")
	case created:
		lg.Info("payrail: charge refunded", "refund_id", refund.ID, "amount_cents", refund.AmountCents)
	default:
		status = http.StatusOK
		w.Header().Set("Idempotent-Replayed", "true")
	}
	// Made before the wait, as a charge is: a client that goes away still
	// has its refund.
	if !s.wait(r, s.cfg.Latency+s.upTo(s.cfg.LatencyJitter)) {
		lg.Info("payrail: client went away during latency; outcome stands", "status", status)
		return
	}
	writeJSON(w, status, body)
}
