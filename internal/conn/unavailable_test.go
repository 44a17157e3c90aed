package conn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"terminated by an operator", &pgconn.PgError{Code: "57P01"}, true},
		{"server restarting", fmt.Errorf("auth: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"dial refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"out of connection slots", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}, true},
		{"out of memory", fmt.Errorf("hold: place: %w", &pgconn.PgError{Code: "53200"}), true},
		{"disk full", &pgconn.PgError{Code: "53100"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"client gone", fmt.Errorf("query: %w", context.Canceled), false},
		{"nil", nil, false},
	} {
		if got := Unavailable(tt.err); got != tt.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestExhausted(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"out of connection slots", fmt.Errorf("auth: %w", &pgconn.PgError{Code: "53300"}), true},
		{"out of memory", &pgconn.PgError{Code: "53200"}, true},
		{"terminated by an operator", &pgconn.PgError{Code: "57P01"}, false},
		{"dial refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"nil", nil, false},
	} {
		if got := Exhausted(tt.err); got != tt.want {
			t.Errorf("%s: Exhausted(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
