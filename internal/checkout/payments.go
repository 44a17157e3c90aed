package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Charge is a payment as Payrail records it.
type Charge struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Errors of the payment client.
var (
	// ErrPaymentDeclined: Payrail declined the charge; nothing was charged.
	ErrPaymentDeclined = errors.New("the payment was declined")
	// ErrPaymentUnavailable: Payrail failed, timed out or its breaker is open.
	// Whether a timed-out charge was made is unknown until asked again.
	ErrPaymentUnavailable = errors.New("the payment provider is unavailable")
)

// errNotCharged marks a failure after which Payrail certainly made no charge:
// the breaker refused to call, the connection was refused, or Payrail answered
// 500 (which records nothing).
var errNotCharged = errors.New("no charge was made")

// PaymentRetryAfter is the default time the breaker stays open, and so the
// Retry-After of a refusal while Payrail is unavailable.
const PaymentRetryAfter = 5 * time.Second

// Payments charges through Payrail with an idempotency key, a deadline and a
// circuit breaker: after 5 failures in a row it stops calling Payrail for
// BreakerCooldown and answers ErrPaymentUnavailable at once, then lets one
// probe through.
type Payments struct {
	baseURL string
	client  *http.Client
	breaker *gobreaker.CircuitBreaker[Charge]
}

// PaymentsOptions configure Payments.
type PaymentsOptions struct {
	BaseURL         string        // PAYRAIL_URL
	Timeout         time.Duration // deadline of one charge; default 5 s
	BreakerFailures uint32        // failures in a row that open the breaker; default 5
	BreakerCooldown time.Duration // how long it stays open; default PaymentRetryAfter
}

// NewPayments returns a Payrail client.
func NewPayments(o PaymentsOptions) *Payments {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.BreakerFailures == 0 {
		o.BreakerFailures = 5
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = PaymentRetryAfter
	}
	return &Payments{
		baseURL: o.BaseURL,
		client:  &http.Client{Timeout: o.Timeout},
		breaker: gobreaker.NewCircuitBreaker[Charge](gobreaker.Settings{
			Name:        "payrail",
			MaxRequests: 1,
			Timeout:     o.BreakerCooldown,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= o.BreakerFailures },
			// A decline is Payrail working as it should.
			IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, ErrPaymentDeclined) },
		}),
	}
}

// Charge charges amountCents once per key, ever. It returns the charge, or
// ErrPaymentDeclined, or ErrPaymentUnavailable (wrapping errNotCharged when
// Payrail certainly made no charge).
func (p *Payments) Charge(ctx context.Context, key string, amountCents int64, currency, token string) (Charge, error) {
	body, _ := json.Marshal(map[string]any{"amount_cents": amountCents, "currency": currency, "token": token})
	ch, err := p.breaker.Execute(func() (Charge, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.baseURL+"/charges", bytes.NewReader(body))
		if err != nil {
			return Charge{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		return p.do(req)
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Charge{}, fmt.Errorf("%w: circuit breaker open: %w", ErrPaymentUnavailable, errNotCharged)
	}
	return ch, err
}

// Find returns the charge made with key, if Payrail has one that succeeded.
func (p *Payments) Find(ctx context.Context, key string) (Charge, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		p.baseURL+"/charges?idempotency_key="+url.QueryEscape(key), nil)
	if err != nil {
		return Charge{}, false, err
	}
	ch, err := p.do(req)
	switch {
	case errors.Is(err, errNoCharge):
		return Charge{}, false, nil
	case err != nil:
		return Charge{}, false, err
	}
	return ch, ch.Status == "succeeded", nil
}

var errNoCharge = errors.New("no such charge")

func (p *Payments) do(req *http.Request) (Charge, error) {
	resp, err := p.client.Do(req)
	if err != nil {
		if isRefused(err) {
			return Charge{}, fmt.Errorf("%w: %w: %v", ErrPaymentUnavailable, errNotCharged, err)
		}
		return Charge{}, fmt.Errorf("%w: %v", ErrPaymentUnavailable, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ch Charge
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated:
		if err := json.Unmarshal(raw, &ch); err != nil || ch.ID == "" {
			return Charge{}, fmt.Errorf("%w: unreadable charge %q", ErrPaymentUnavailable, raw)
		}
		return ch, nil
	case http.StatusPaymentRequired:
		return Charge{}, ErrPaymentDeclined
	case http.StatusNotFound:
		return Charge{}, errNoCharge
	case http.StatusInternalServerError:
		return Charge{}, fmt.Errorf("%w: %w: Payrail answered 500", ErrPaymentUnavailable, errNotCharged)
	default:
		return Charge{}, fmt.Errorf("%w: Payrail answered %s: %s", ErrPaymentUnavailable, resp.Status, raw)
	}
}
