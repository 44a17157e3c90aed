package onsale

import (
	"context"
	"net/http"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// Payrail's test cards.
const (
	cardVisa     = "tok_visa"
	cardDeclined = "tok_declined"
)

// maxRejoins bounds how often a buyer joins the queue again after a hold
// found her not admitted.
const maxRejoins = 3

// shop holds 1 to 4 seats and pays for them, and holds others when seats
// were taken meanwhile, up to MaxHoldTries holds. It returns how her visit
// ended.
func (b *buyer) shop(ctx context.Context) string {
	want := 1 + b.rng.IntN(4)
	card := cardVisa
	if b.rng.Float64() < b.opts.DeclineRate {
		card = cardDeclined
	}
	var seats []seat
	var taken map[apiclient.ID]bool
	rejoins := 0
	for tries := 0; tries < b.opts.MaxHoldTries && ctx.Err() == nil; {
		if seats == nil {
			var ok bool
			if seats, ok = b.seatMap(ctx, b.sale.event()); !ok {
				return outcomeNoAnswer
			}
			taken = map[apiclient.ID]bool{}
		}
		chosen := b.pick(seats, want, taken)
		if len(chosen) == 0 {
			if len(taken) == 0 {
				return outcomeSoldOut // a fresh map with no seat available
			}
			seats = nil // what this map showed is taken: read it again
			continue
		}
		tries++
		a, err := b.call(ctx, routeHold, b.hold(b.sale.event(), chosen))
		if err != nil {
			sleep(ctx, b.jitter(time.Second))
			continue
		}
		switch slug := a.problem.slug(); {
		case a.status == http.StatusCreated:
			var h holdID
			if a.decode(&h) != nil {
				return outcomeGaveUp
			}
			b.rec.holding.Add(1)
			out := b.pay(ctx, h.ID, &card)
			b.rec.holding.Add(-1)
			if out != "" {
				return out
			}
			seats = nil // the hold was lost: choose again
		case a.status == http.StatusConflict && slug == "seats-unavailable":
			for _, id := range a.problem.UnavailableSeatIDs {
				taken[id] = true
			}
			if tries%2 == 0 {
				seats = nil // every other conflict, a fresher map
			}
		case a.status == http.StatusConflict && slug == "not-on-sale":
			tries--
			sleep(ctx, time.Until(b.sale.OnSaleAt)+b.jitter(200*time.Millisecond))
		case a.status == http.StatusForbidden && slug == "not-admitted" && b.sale.HasRoom && rejoins < maxRejoins:
			tries, rejoins = tries-1, rejoins+1
			b.state.rejoined = true
			b.rec.admit.Add(-1)
			if out := b.queue(ctx); out != "" {
				return out
			}
		case a.status == http.StatusTooManyRequests, a.status >= 500:
			tries--
			sleep(ctx, b.jitter(a.retryAfter(time.Second)))
		default:
			return outcomeRefused
		}
	}
	return outOfTries(ctx)
}

// order is an order (apiclient.Order) as the buyer reads it.
type order struct {
	ID      apiclient.ID          `json:"id"`
	Status  apiclient.OrderStatus `json:"status"`
	Tickets []struct {
		SeatID apiclient.ID `json:"seat_id"`
	} `json:"tickets"`
}

// maxPayAttempts bounds the checkout requests of one hold.
const maxPayAttempts = 20

// pay checks the hold out with an Idempotency-Key, the same for every retry
// of one attempt: a declined card is followed by tok_visa under a new key, a
// 503 or no answer by the same request after Retry-After, a 202 by reading
// the order until it is settled. It returns how her visit ended, or "" when
// the hold is no longer hers to pay (choose seats again).
func (b *buyer) pay(ctx context.Context, holdID apiclient.ID, card *string) string {
	key := ids.New()
	for attempt := 0; attempt < maxPayAttempts && ctx.Err() == nil; attempt++ {
		a, err := b.call(ctx, routeOrder, func(ctx context.Context) (*http.Response, error) {
			return b.api.Checkout(ctx, &apiclient.CheckoutParams{IdempotencyKey: &key},
				apiclient.OrderRequest{HoldId: holdID, PaymentToken: *card})
		})
		if err != nil {
			sleep(ctx, b.jitter(time.Second))
			continue
		}
		var o order
		switch slug := a.problem.slug(); {
		case a.status == http.StatusCreated || a.status == http.StatusAccepted:
			if a.decode(&o) != nil {
				return outcomeGaveUp
			}
			if o.Status == "pending" {
				o = b.settled(ctx, o)
			}
			switch o.Status {
			case "confirmed":
				b.bought(o)
				return outcomeBought
			case "released":
				return ""
			case "declined":
				*card, key = cardVisa, ids.New()
			case "pending":
				return outcomeCut
			} // failed: the same key runs the checkout anew
		case a.status == http.StatusPaymentRequired:
			*card, key = cardVisa, ids.New() // another card, another attempt
		case a.status == http.StatusConflict && slug == "idempotency-in-progress":
			sleep(ctx, b.jitter(time.Second))
		case a.status == http.StatusConflict:
			return "" // hold-not-active or order-released
		case a.status == http.StatusTooManyRequests, a.status >= 500:
			sleep(ctx, b.jitter(a.retryAfter(time.Second)))
		default:
			return outcomeRefused
		}
	}
	return outOfTries(ctx)
}

// settled reads a pending order until recovery settles it (or the run ends).
func (b *buyer) settled(ctx context.Context, o order) order {
	for sleep(ctx, b.jitter(time.Second)) {
		a, err := b.call(ctx, routeGetOrder, func(ctx context.Context) (*http.Response, error) { return b.api.GetOrder(ctx, o.ID) })
		if err != nil || a.status != http.StatusOK {
			continue
		}
		var now order
		if a.decode(&now) == nil && now.Status != "pending" {
			return now
		}
	}
	return o
}

// bought records her confirmed order.
func (b *buyer) bought(o order) {
	for _, t := range o.Tickets {
		b.state.seats = append(b.state.seats, t.SeatID.String())
	}
	b.rec.confirmed(len(o.Tickets))
}

// outOfTries is the outcome of a buyer whose loop of tries ended without one:
// cut when the run ended first, gave up otherwise.
func outOfTries(ctx context.Context) string {
	if ctx.Err() != nil {
		return outcomeCut
	}
	return outcomeGaveUp
}
