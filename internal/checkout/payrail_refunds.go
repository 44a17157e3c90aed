package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// errRefundRefused marks Payrail's refusal of a refund (409, 404, 422, 400):
// it made none, and would not on asking again.
var errRefundRefused = errors.New("the payment provider refused the refund")

// Refund asks Payrail to give amountCents of the charge back, with key (the
// refund's id) as its Idempotency-Key: however often it is asked, Payrail
// makes one refund a key. It returns the refund Payrail holds, or an error
// wrapping errRefundRefused when Payrail refused it (nothing was refunded,
// and asking again is no use), or ErrPaymentUnavailable: the outcome is
// unknown (a timeout, a cut connection, a 5xx), and the same key is to be
// sent again.
func (p *Payments) Refund(ctx context.Context, chargeID, key string, amountCents int64) (Refund, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]int64{"amount_cents": amountCents})
	req, err := p.request(ctx, http.MethodPost, "/charges/"+url.PathEscape(chargeID)+"/refunds", bytes.NewReader(body))
	if err != nil {
		return Refund{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	var r Refund
	status, raw, err := p.do(req, &r)
	switch {
	case err != nil:
		return Refund{}, err
	case (status == http.StatusOK || status == http.StatusCreated) && r.ID != "":
		return r, nil
	case status == http.StatusConflict, status == http.StatusNotFound, status == http.StatusUnprocessableEntity,
		status == http.StatusBadRequest:
		return Refund{}, fmt.Errorf("%w (%d): %s", errRefundRefused, status, bytes.TrimSpace(raw))
	default:
		return Refund{}, fmt.Errorf("%w: refund %s of %s: Payrail answered %d: %s", ErrPaymentUnavailable, key, chargeID, status, raw)
	}
}

// Refunds lists up to limit of Payrail's refunds after the one made at
// afterTime with id afterID (zero values: from the first), in the order they
// were made.
func (p *Payments) Refunds(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]Refund, error) {
	ctx, cancel := context.WithTimeout(ctx, p.lookupTimeout())
	defer cancel()
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if !afterTime.IsZero() {
		q.Set("created_after", afterTime.UTC().Format(time.RFC3339Nano))
		q.Set("after_id", afterID)
	}
	req, err := p.request(ctx, http.MethodGet, "/refunds?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var page struct {
		Refunds []Refund `json:"refunds"`
	}
	status, raw, err := p.do(req, &page)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, fmt.Errorf("%w: listing refunds, Payrail answered %d: %s", ErrPaymentUnavailable, status, raw)
	}
	return page.Refunds, nil
}
