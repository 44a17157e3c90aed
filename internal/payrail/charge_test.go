package payrail

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var chargeID = regexp.MustCompile(`^ch_[0-9a-f]{32}$`)

func TestChargeSucceeds(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{})
	r := mustPost(t, ts, "order-1", `{"amount_cents":4200,"currency":"eur","token":"tok_visa"}`)
	if r.status != 201 {
		t.Fatalf("status %d, want 201: %s", r.status, r.raw)
	}
	c := r.body.Charge
	if !chargeID.MatchString(c.ID) || c.Status != StatusSucceeded || c.AmountCents != 4200 ||
		c.Currency != "EUR" || c.IdempotencyKey != "order-1" {
		t.Errorf("charge %+v", c)
	}
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if !strings.Contains(string(r.raw), `"created_at":"`) || c.CreatedAt.Location() != time.UTC ||
		time.Since(c.CreatedAt) > time.Minute {
		t.Errorf("created_at in %s", r.raw)
	}
	if all := charges(t, s); len(all) != 1 || all[0].ID != c.ID {
		t.Errorf("Charges() = %+v", all)
	}
	// The same key again: the same charge, not a second one.
	again := mustPost(t, ts, "order-1", chargeBody(TokenVisa))
	if again.status != 201 || again.body.ID != c.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", again.status, again.raw)
	}
	if n := len(charges(t, s)); n != 1 {
		t.Errorf("%d charges after a replay, want 1", n)
	}
}

func TestChargeDeclinesAndReplaysTheDecline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ token, reason string }{
		{TokenDeclined, "card_declined"},
		{"tok_mastercard", "unknown_token"},
	} {
		t.Run(tc.token, func(t *testing.T) {
			t.Parallel()
			s, ts, _ := start(t, Config{})
			r := mustPost(t, ts, "k", chargeBody(tc.token))
			if r.status != 402 || r.body.Status != StatusDeclined || r.body.DeclineReason != tc.reason ||
				!chargeID.MatchString(r.body.ID) {
				t.Fatalf("got %d %s, want 402 declined %s", r.status, r.raw, tc.reason)
			}
			// A declined key stays declined, even with a good card.
			again := mustPost(t, ts, "k", chargeBody(TokenVisa))
			if again.status != 402 || again.body.ID != r.body.ID || again.body.Status != StatusDeclined {
				t.Errorf("replay: %d %s", again.status, again.raw)
			}
			if all := charges(t, s); len(all) != 1 || all[0].Status != StatusDeclined || all[0].IdempotencyKey != "k" {
				t.Errorf("charges = %+v, want the one decline", all)
			}
		})
	}
}

func TestTokErrorChargesNothingAndARetrySucceeds(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{})
	r := mustPost(t, ts, "k", chargeBody(TokenError))
	if r.status != 500 || r.body.Error == "" || r.body.ID != "" {
		t.Fatalf("got %d %s, want 500 with an error", r.status, r.raw)
	}
	if n := len(charges(t, s)); n != 0 {
		t.Fatalf("%d charges after a 500, want 0", n)
	}
	if g := get(t, ts, "/charges?idempotency_key=k", nil); g.status != 404 {
		t.Errorf("GET after a 500: %d %s, want 404", g.status, g.raw)
	}
	retry := mustPost(t, ts, "k", chargeBody(TokenVisa))
	if retry.status != 201 || retry.body.Status != StatusSucceeded || retry.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s, want a new 201", retry.status, retry.raw)
	}
	if n := len(charges(t, s)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
}

func TestFailureRate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		rate          float64
		status, count int // each of 20 requests' status, and the charges made
	}{
		{"1 always fails", 1, 500, 0},
		{"0 never fails", 0, 201, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ts, _ := start(t, Config{FailureRate: tt.rate})
			for i := range 20 {
				if r := mustPost(t, ts, "k"+string(rune('a'+i)), chargeBody(TokenVisa)); r.status != tt.status {
					t.Fatalf("request %d: %d %s, want %d", i, r.status, r.raw, tt.status)
				}
			}
			if n := len(charges(t, s)); n != tt.count {
				t.Errorf("%d charges, want %d", n, tt.count)
			}
		})
	}
	t.Run("injected random source", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		rolls := []float64{0.29, 0.31, 0.0}
		left := func() int { mu.Lock(); defer mu.Unlock(); return len(rolls) }
		s, ts, _ := start(t, Config{FailureRate: 0.3, Rand: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			v := rolls[0]
			rolls = rolls[1:]
			return v
		}})
		want := []int{500, 201}
		for i, code := range want {
			if r := mustPost(t, ts, "k", chargeBody(TokenVisa)); r.status != code {
				t.Fatalf("request %d: %d, want %d", i, r.status, code)
			}
		}
		// A replay rolls no dice and never fails.
		if r := mustPost(t, ts, "k", chargeBody(TokenVisa)); r.status != 201 || left() != 1 {
			t.Errorf("replay: %d, %d rolls left", r.status, left())
		}
		if n := len(charges(t, s)); n != 1 {
			t.Errorf("%d charges, want 1", n)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Latency: -1}, {LatencyJitter: -1}, {RecordDelay: -1}, {FailureRate: -0.1}, {FailureRate: 1.1}} {
		if cfg.Validate() == nil {
			t.Errorf("%+v: Validate() = nil, want an error", cfg)
		}
	}
	if err := (Config{Latency: time.Second, FailureRate: 1}).Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	if _, err := Open(t.Context(), nil, Config{FailureRate: 2}, nil); err == nil {
		t.Error("Open with a bad config succeeded")
	}
}

// A real payment token is a secret: the log never shows it, nor any hash of
// it (a short hash of a card number can be brute-forced).
func TestTheLogNeverHoldsAPaymentToken(t *testing.T) {
	t.Parallel()
	_, ts, logs := start(t, Config{})
	const secret = "tok_live_4242424242424242_secret"
	mustPost(t, ts, "k-secret", chargeBody(secret))
	mustPost(t, ts, "k-secret", chargeBody(secret)) // replayed: logged again
	mustPost(t, ts, "k-visa", chargeBody(TokenVisa))
	out := logs.String()
	sum := sha256.Sum256([]byte(secret))
	digest := hex.EncodeToString(sum[:])
	if strings.Contains(out, secret) || strings.Contains(out, "4242424242424242") ||
		strings.Contains(out, "sha256") || strings.Contains(out, digest[:6]) {
		t.Errorf("the log holds the payment token or a hash of it:\n%s", out)
	}
	if strings.Count(out, "token=other") != 2 || !strings.Contains(out, "token="+TokenVisa) {
		t.Errorf("the log does not name the test token, and only say of the others that they are not one:\n%s", out)
	}
}
