package checkout

import (
	"context"
	"strings"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Attempt is a checkout that will try to pay: its Idempotency-Key, if any, is
// claimed for it, and nothing else is written yet. Its caller decides what it
// must first (a payment attempt's limits, a checkout slot), then runs it or
// abandons it; either way exactly once.
type Attempt struct {
	s                      *Service
	buyerID, holdID, token string
	key                    *claim
}

// HoldID is the hold the attempt pays for, as a canonical id.
func (a *Attempt) HoldID() string { return a.holdID }

// Claim starts a checkout. When the request's Idempotency-Key already has its
// answer, it returns that (done): the key's order as it stands now, with the
// error Checkout would return, or ErrIdempotencyMismatch or
// ErrIdempotencyInProgress; such a request attempts nothing, so no limit or
// slot is due for it. Otherwise it returns the Attempt to run (or abandon). A
// malformed request is an errkind.Invalid error.
func (s *Service) Claim(ctx context.Context, r Request) (a *Attempt, res Result, err error) {
	if err := r.Check(); err != nil {
		return nil, Result{}, err
	}
	holdID, _ := ids.Parse(r.HoldID)
	a = &Attempt{s: s, buyerID: r.BuyerID, holdID: holdID, token: strings.TrimSpace(r.PaymentToken)}
	if r.IdempotencyKey == "" {
		return a, Result{}, nil
	}
	key, orderID, err := s.store.claimKey(ctx, r.BuyerID, r.IdempotencyKey, requestHash(holdID, a.token), s.lease)
	if err != nil {
		return nil, Result{}, err
	}
	if key == nil {
		o, err := s.Order(ctx, r.BuyerID, orderID)
		if err != nil {
			return nil, Result{}, err
		}
		return nil, Result{Order: o, Replayed: true}, o.settledError()
	}
	a.key = key
	return a, Result{}, nil
}

// Run pays for the hold: see Checkout.
func (a *Attempt) Run(ctx context.Context) (Result, error) {
	defer a.finish(ctx)
	return a.s.attempt(ctx, a.buyerID, a.holdID, a.token, a.key)
}

// Again reports whether the attempt tries again what its Idempotency-Key
// tried before and certainly did not charge: the same card on the same hold.
func (a *Attempt) Again() bool { return a.key != nil && a.key.again }

// Abandon gives the attempt up before it wrote anything: its key is
// forgotten, so that a retry with it runs anew. Nothing changed.
func (a *Attempt) Abandon(ctx context.Context) { a.finish(ctx) }

func (a *Attempt) finish(ctx context.Context) {
	if a.key == nil {
		return
	}
	if err := a.s.store.finishKey(context.WithoutCancel(ctx), a.key); err != nil {
		a.s.database.Failed(err) // the claim lapses with its lease
	}
}

// PaymentRefused is the error a checkout of the buyer would get at once
// because the payment breaker holds Payrail to be down, or nil: asked before
// a limit's token is spent, so that an outage costs buyers none.
func (s *Service) PaymentRefused(buyerID string) error {
	if s.payments.Refusing(buyerID) {
		return errBreakerOpen
	}
	return nil
}
