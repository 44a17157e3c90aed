package payrail

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// race sends n concurrent POST /charges with one key and returns the responses.
func race(t *testing.T, n int, post1 func() (response, error)) []response {
	t.Helper()
	var wg sync.WaitGroup
	ready := make(chan struct{})
	out := make([]response, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-ready
			out[i], errs[i] = post1()
		})
	}
	close(ready)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

func TestConcurrentRequestsWithOneKeyChargeOnce(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{Latency: 20 * time.Millisecond})
	rs := race(t, 50, func() (response, error) {
		return post(t.Context(), t, ts, "one-key", chargeBody(TokenVisa))
	})
	replayed := 0
	for i, r := range rs {
		if r.status != 201 || r.body.ID != rs[0].body.ID || r.body.Status != StatusSucceeded {
			t.Errorf("request %d: %d %s, want 201 %s", i, r.status, r.raw, rs[0].body.ID)
		}
		if r.header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
	}
	if all := charges(t, s); len(all) != 1 || all[0].ID != rs[0].body.ID {
		t.Errorf("Charges() = %+v, want exactly one", all)
	}
	if replayed != 49 {
		t.Errorf("%d replays, want 49", replayed)
	}
}

func TestConcurrentRequestsWithFailuresStillChargeOnce(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{FailureRate: 0.5})
	rs := race(t, 50, func() (response, error) {
		return post(t.Context(), t, ts, "one-key", chargeBody(TokenVisa))
	})
	id := ""
	for i, r := range rs {
		switch {
		case r.status == 500:
		case r.status == 201 && (id == "" || r.body.ID == id):
			id = r.body.ID
		default:
			t.Errorf("request %d: %d %s", i, r.status, r.raw)
		}
	}
	want := 0
	if id != "" {
		want = 1
	}
	if n := len(charges(t, s)); n != want {
		t.Errorf("%d charges, want %d", n, want)
	}
}

func TestLatencyIsApplied(t *testing.T) {
	t.Parallel()
	const latency = 50 * time.Millisecond
	_, ts, _ := start(t, Config{Latency: latency})
	for _, token := range []string{TokenVisa, TokenDeclined, TokenError} {
		began := time.Now()
		r := mustPost(t, ts, "k-"+token, chargeBody(token))
		if took := time.Since(began); took < latency {
			t.Errorf("%s: answered %d after %s, want at least %s", token, r.status, took, latency)
		}
	}
}

func TestAChargeStandsWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	s, ts, logs := start(t, Config{Latency: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if r, err := post(ctx, t, ts, "gone", chargeBody(TokenVisa)); err == nil {
		t.Fatalf("got %d %s before the client's deadline, want a timeout", r.status, r.raw)
	}
	var c Charge
	if g := get(t, ts, "/charges?idempotency_key=gone", &c); g.status != 200 {
		t.Fatalf("GET ?idempotency_key=gone: %d %s, want 200", g.status, g.raw)
	}
	if c.Status != StatusSucceeded || c.IdempotencyKey != "gone" || !chargeID.MatchString(c.ID) ||
		len(charges(t, s)) != 1 {
		t.Errorf("charge %+v", c)
	}
	// The handler stops waiting once the client has gone (else ts.Close would
	// block for the whole minute).
	if !testenv.Poll(10*time.Second, 10*time.Millisecond, func() bool { return strings.Contains(logs.String(), "client went away") }) {
		t.Fatalf("the handler did not notice the client leave; logs:\n%s", logs)
	}
	// The client's retry (which times out too) replays it: still one charge.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel2()
	if r, err := post(ctx2, t, ts, "gone", chargeBody(TokenVisa)); err == nil {
		t.Fatalf("retry: got %d before the client's deadline, want a timeout", r.status)
	}
	if n := len(charges(t, s)); n != 1 {
		t.Errorf("%d charges after a retry, want 1", n)
	}
}
