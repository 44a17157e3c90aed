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
	"strconv"
	"time"
)

// Charge is a payment as Payrail records it.
type Charge struct {
	ID             string    `json:"id"`
	Status         string    `json:"status"` // "succeeded" or "declined"
	IdempotencyKey string    `json:"idempotency_key"`
	AmountCents    int64     `json:"amount_cents"`
	Currency       string    `json:"currency"`
	RecordedAt     time.Time `json:"recorded_at"`
	// RefundedCents is how much of the charge its refunds gave back.
	RefundedCents int64 `json:"refunded_cents"`
	// Refunds are the charge's refunds, in the order they were made.
	Refunds []Refund `json:"refunds"`
}

// Refund is a charge given back, in part or whole.
type Refund struct {
	ID             string `json:"id"`
	ChargeID       string `json:"charge_id"`
	IdempotencyKey string `json:"idempotency_key"` // the charge's: its order's id
	// RefundKey is the Idempotency-Key the refund was asked for with: the id
	// of a refund of Stagedoor's; anything else (or none) for one made by
	// someone else.
	RefundKey   string    `json:"refund_key"`
	AmountCents int64     `json:"amount_cents"`
	CreatedAt   time.Time `json:"created_at"`
}

// succeeded reports whether money moved (given back since or not).
func (c Charge) succeeded() bool { return c.Status == "succeeded" }

// refundedInFull reports whether the charge's refunds gave all of it back,
// and returns the last of them; a charge of nothing never is.
func (c Charge) refundedInFull() (Refund, bool) {
	if len(c.Refunds) == 0 || c.RefundedCents < c.AmountCents {
		return Refund{}, false
	}
	return c.Refunds[len(c.Refunds)-1], true
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
// the breaker refused to call, the connection was refused before any try of
// the request had one, or Payrail answered 500 (which records nothing) or 401
// (which looks at nothing).
var errNotCharged = errors.New("no charge was made")

// PaymentRetryAfter is the default time the breaker stays open, and so the
// Retry-After of a refusal while Payrail is unavailable.
const PaymentRetryAfter = 5 * time.Second

// DefaultPaymentTimeout is the deadline of one charge when none is configured.
const DefaultPaymentTimeout = 5 * time.Second

// Payments charges through Payrail with an idempotency key, a deadline and a
// circuit breaker that no one buyer can open (breaker): while Payrail fails
// for half of the buyers paying, and enough of them, it stops calling Payrail
// for BreakerCooldown and answers ErrPaymentUnavailable at once, then lets a
// few probes through. It also
// finds, lists and refunds charges, for recovery and reconciliation (without
// the breaker: they run on one instance, seldom).
type Payments struct {
	baseURL string
	apiKey  string
	timeout time.Duration
	client  *http.Client
	breaker *breaker
}

// PaymentsOptions configure Payments.
type PaymentsOptions struct {
	BaseURL string        // PAYRAIL_URL
	APIKey  string        // PAYRAIL_API_KEY, sent with every request; none when empty
	Timeout time.Duration // deadline of one charge (STAGEDOOR_PAYMENT_TIMEOUT); default 5 s
	// BreakerBuyers is the breaker's volume: it opens only when at least this
	// many buyers paid within BreakerWindow, half of them or more (and at
	// least 3) failing (STAGEDOOR_PAYMENT_BREAKER_BUYERS; default
	// DefaultBreakerBuyers, 20; at least 3).
	BreakerBuyers   int
	BreakerWindow   time.Duration // default DefaultBreakerWindow (10 s)
	BreakerCooldown time.Duration // how long it stays open; default PaymentRetryAfter
}

// NewPayments returns a Payrail client.
func NewPayments(o PaymentsOptions) *Payments {
	if o.Timeout <= 0 {
		o.Timeout = DefaultPaymentTimeout
	}
	if o.BreakerBuyers <= 0 {
		o.BreakerBuyers = DefaultBreakerBuyers
	}
	if o.BreakerWindow <= 0 {
		o.BreakerWindow = DefaultBreakerWindow
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = PaymentRetryAfter
	}
	return &Payments{
		baseURL: o.BaseURL,
		apiKey:  o.APIKey,
		timeout: o.Timeout,
		client:  &http.Client{Transport: keepAlive()},
		breaker: newBreaker(o.BreakerWindow, o.BreakerBuyers, o.BreakerCooldown),
	}
}

// keepAlive is the transport to Payrail: Go's default, keeping up to 64 idle
// connections (not 2), so that the checkouts of a busy instance reuse their
// connections instead of dialing one a charge. A reused connection is why a
// refusal proves nothing on its own (see tracked).
func keepAlive() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}

// Timeout is the deadline of one charge.
func (p *Payments) Timeout() time.Duration { return p.timeout }

// errBreakerOpen is ErrPaymentUnavailable while the breaker refuses every call.
var errBreakerOpen = fmt.Errorf("%w: circuit breaker open: %w", ErrPaymentUnavailable, errNotCharged)

// Refusing reports whether Charge would refuse the buyer at once: the breaker
// is open, or half-open with no probe's place for this buyer. A checkout then
// refuses before writing an order or spending a limit's token. (The breaker
// itself stays the judge: this only saves the work.)
func (p *Payments) Refusing(buyerID string) bool { return p.breaker.refusing(buyerID) }

// Unavailable reports whether the breaker holds Payrail to be down (open or
// half-open): an outage, as the log reports it.
func (p *Payments) Unavailable() bool { return p.breaker.unavailable() }

// Charge charges amountCents once per key, ever, before ctx's deadline, for
// the buyer (whose outcome the breaker counts). It returns the charge, or
// ErrPaymentDeclined, or ErrPaymentUnavailable (wrapping errNotCharged when
// Payrail certainly made no charge; otherwise the outcome is unknown).
func (p *Payments) Charge(ctx context.Context, buyerID, key string, amountCents int64, currency, token string) (Charge, error) {
	if !p.breaker.admit(buyerID) {
		return Charge{}, errBreakerOpen
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	ch, err := p.charge(ctx, key, amountCents, currency, token)
	// A decline is Payrail working as it should.
	p.breaker.record(buyerID, err != nil && !errors.Is(err, ErrPaymentDeclined))
	return ch, err
}

func (p *Payments) charge(ctx context.Context, key string, amountCents int64, currency, token string) (Charge, error) {
	body, _ := json.Marshal(map[string]any{"amount_cents": amountCents, "currency": currency, "token": token})
	req, err := p.request(ctx, http.MethodPost, "/charges", bytes.NewReader(body))
	if err != nil {
		return Charge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	var c Charge
	switch status, raw, err := p.do(req, &c); {
	case err != nil:
		return Charge{}, err
	case (status == http.StatusOK || status == http.StatusCreated) && c.ID != "":
		return c, nil
	case status == http.StatusPaymentRequired:
		return Charge{}, ErrPaymentDeclined
	case status == http.StatusInternalServerError:
		return Charge{}, fmt.Errorf("%w: %w: Payrail answered 500", ErrPaymentUnavailable, errNotCharged)
	case status == http.StatusUnauthorized:
		// Refused before anything was looked at: PAYRAIL_API_KEY is wrong.
		return Charge{}, fmt.Errorf("%w: %w: Payrail refused the API key (401): check PAYRAIL_API_KEY", ErrPaymentUnavailable, errNotCharged)
	default:
		return Charge{}, fmt.Errorf("%w: Payrail answered %d: %s", ErrPaymentUnavailable, status, raw)
	}
}

// lookupTimeout is the deadline of a request of recovery or reconciliation:
// a payment's, but at least 5 s (they hold up no buyer).
func (p *Payments) lookupTimeout() time.Duration { return max(p.timeout, 5*time.Second) }

// request is a request to Payrail's path, with the API key.
func (p *Payments) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, p.baseURL+path, body)
	if err != nil {
		return nil, err
	}
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	return req, nil
}

// Finding is what Payrail can say about a charge attempt.
type Finding int

// The findings.
const (
	// FindingUnknown: Payrail cannot tell yet (it has no record, but its ledger
	// does not cover the attempt: it started afterwards, or its records lag).
	FindingUnknown Finding = iota
	// FindingCharged: a succeeded charge.
	FindingCharged
	// FindingNotCharged: certainly no charge: no record where the ledger
	// covers the attempt.
	FindingNotCharged
	// FindingDeclined: Payrail declined the charge; no money moved.
	FindingDeclined
)

// ClockSkew is how far apart Stagedoor's and Payrail's clocks may be. A
// missing record proves "no charge" only when Payrail's ledger covers the
// attempt by this much on either side.
const ClockSkew = time.Second

// Find asks Payrail about the charge attempted with key, which could reach
// Payrail between started and deadline: FindingCharged or FindingDeclined when
// Payrail has it. A "no such charge" is FindingNotCharged
// only when Payrail's ledger covered that whole window; otherwise it is
// FindingUnknown. An error means Payrail could not be asked.
func (p *Payments) Find(ctx context.Context, key string, started, deadline time.Time) (Charge, Finding, error) {
	ctx, cancel := context.WithTimeout(ctx, p.lookupTimeout())
	defer cancel()
	req, err := p.request(ctx, http.MethodGet, "/charges?idempotency_key="+url.QueryEscape(key), nil)
	if err != nil {
		return Charge{}, FindingUnknown, err
	}
	var found struct {
		Charge
		Since           time.Time `json:"ledger_since"`
		CompleteThrough time.Time `json:"complete_through"`
	}
	status, raw, err := p.do(req, &found)
	switch {
	case err != nil:
		return Charge{}, FindingUnknown, err
	case status == http.StatusOK && found.succeeded():
		return found.Charge, FindingCharged, nil
	case status == http.StatusOK:
		return found.Charge, FindingDeclined, nil
	case status != http.StatusNotFound:
		return Charge{}, FindingUnknown, fmt.Errorf("%w: Payrail answered %d: %s", ErrPaymentUnavailable, status, raw)
	case found.Since.IsZero() || found.CompleteThrough.IsZero():
		return Charge{}, FindingUnknown, nil // a Payrail that does not say what it covers proves nothing
	case !found.Since.Add(ClockSkew).After(started) && !found.CompleteThrough.Before(deadline.Add(ClockSkew)):
		return Charge{}, FindingNotCharged, nil
	default:
		return Charge{}, FindingUnknown, nil
	}
}

// chargesPage is how many charges reconciliation reads a request.
const chargesPage = 500

// Charges lists up to limit of Payrail's recorded charges after the one
// recorded at afterTime with id afterID (zero values: from the first), in the
// order they were recorded.
func (p *Payments) Charges(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]Charge, error) {
	ctx, cancel := context.WithTimeout(ctx, p.lookupTimeout())
	defer cancel()
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if !afterTime.IsZero() {
		q.Set("recorded_after", afterTime.UTC().Format(time.RFC3339Nano))
		q.Set("after_id", afterID)
	}
	req, err := p.request(ctx, http.MethodGet, "/charges?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var page struct {
		Charges []Charge `json:"charges"`
	}
	status, raw, err := p.do(req, &page)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, fmt.Errorf("%w: listing charges, Payrail answered %d: %s", ErrPaymentUnavailable, status, raw)
	}
	return page.Charges, nil
}

// RefundRest gives back what is left of a succeeded charge, once however
// often it is called for the charge as it stands: its Idempotency-Key names
// the charge and how much of it was refunded already. Any failure is
// ErrPaymentUnavailable: the refund is to be tried again.
func (p *Payments) RefundRest(ctx context.Context, c Charge) (Refund, error) {
	key := fmt.Sprintf("rest-%s-%d", c.ID, c.RefundedCents)
	r, err := p.Refund(ctx, c.ID, key, c.AmountCents-c.RefundedCents)
	if errors.Is(err, errRefundRefused) {
		return Refund{}, fmt.Errorf("%w: %w", ErrPaymentUnavailable, err)
	}
	return r, err
}

// do sends req and decodes a JSON answer into v. A transport failure is
// ErrPaymentUnavailable, wrapping errNotCharged only when the connection was
// refused and no try of the request ever had one (so it never reached
// Payrail: see tracked).
func (p *Payments) do(req *http.Request, v any) (int, []byte, error) {
	req, reached := tracked(req)
	resp, err := p.client.Do(req)
	if err != nil {
		if isRefused(err) && !reached() {
			return 0, nil, fmt.Errorf("%w: %w: %v", ErrPaymentUnavailable, errNotCharged, err)
		}
		return 0, nil, fmt.Errorf("%w: %v", ErrPaymentUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: reading the answer: %v", ErrPaymentUnavailable, err)
	}
	readable := resp.StatusCode < 300 || resp.StatusCode == http.StatusNotFound
	if readable && len(raw) > 0 && json.Unmarshal(raw, v) != nil {
		return 0, nil, fmt.Errorf("%w: unreadable answer (%d) %q", ErrPaymentUnavailable, resp.StatusCode, raw)
	}
	return resp.StatusCode, raw, nil
}
