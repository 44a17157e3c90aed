package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/ids"
)

// Service places and reads orders.
type Service struct {
	store        store
	payments     *Payments
	recoverAfter time.Duration
	logger       *slog.Logger
}

// NewService returns a Service charging through payments. A pending order is
// settled by Recover once it is older than recoverAfter.
func NewService(db *pgxpool.Pool, payments *Payments, recoverAfter time.Duration, logger *slog.Logger) *Service {
	return &Service{store: store{db: db}, payments: payments, recoverAfter: recoverAfter, logger: logger}
}

// Payments is the Payrail client the service charges through.
func (s *Service) Payments() *Payments { return s.payments }

// Checkout buys the seats of the buyer's hold with paymentToken. It returns the
// confirmed order and its tickets, or ErrInvalidInput, hold.ErrNotFound,
// hold.ErrNotActive, ErrPaymentDeclined (the hold is active again) or
// ErrPaymentUnavailable (the hold is active again when Payrail certainly made
// no charge; otherwise the order stays pending until Recover settles it).
//
// Once the charge is under way the caller's cancellation no longer stops it: a
// buyer who hangs up mid-payment still gets a settled order.
func (s *Service) Checkout(ctx context.Context, buyerID, holdID, paymentToken string) (Order, error) {
	holdID, ok := ids.Parse(holdID)
	if !ok {
		return Order{}, fmt.Errorf("%w: hold_id must be a hold's id", ErrInvalidInput)
	}
	paymentToken = strings.TrimSpace(paymentToken)
	if paymentToken == "" || len(paymentToken) > 255 {
		return Order{}, fmt.Errorf("%w: payment_token is required (at most 255 characters)", ErrInvalidInput)
	}
	o, err := s.store.begin(ctx, buyerID, holdID)
	if err != nil {
		return Order{}, err
	}

	ctx = context.WithoutCancel(ctx)
	charge, err := s.payments.Charge(ctx, o.ID, o.TotalCents, o.Currency, paymentToken)
	switch {
	case err == nil:
		if _, err := s.store.confirm(ctx, o, charge.ID); err != nil {
			return Order{}, err // pending, charged: Recover confirms it
		}
		return s.Order(ctx, buyerID, o.ID)
	case errors.Is(err, ErrPaymentDeclined):
		if err := s.store.reopen(ctx, o, Declined); err != nil {
			return Order{}, err
		}
		return Order{}, ErrPaymentDeclined
	case errors.Is(err, errNotCharged):
		if err := s.store.reopen(ctx, o, Failed); err != nil {
			return Order{}, err
		}
		return Order{}, err
	default:
		// Payrail may or may not have charged: the order stays pending and its
		// seats kept until Recover asks Payrail.
		s.logger.Warn("checkout: charge outcome unknown; left for recovery", "order_id", o.ID, "error", err)
		return Order{}, err
	}
}

// Order returns one of the buyer's orders, or ErrNotFound.
func (s *Service) Order(ctx context.Context, buyerID, orderID string) (Order, error) {
	orderID, ok := ids.Parse(orderID)
	if !ok {
		return Order{}, ErrNotFound
	}
	orders, err := s.store.orders(ctx, buyerID, orderID)
	if err != nil {
		return Order{}, err
	}
	if len(orders) == 0 {
		return Order{}, ErrNotFound
	}
	return orders[0], nil
}

// Orders returns the buyer's orders, newest first.
func (s *Service) Orders(ctx context.Context, buyerID string) ([]Order, error) {
	return s.store.orders(ctx, buyerID, "")
}

// Tickets returns the buyer's tickets.
func (s *Service) Tickets(ctx context.Context, buyerID string) ([]Ticket, error) {
	return s.store.tickets(ctx, buyerID, "")
}
