package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// BenchmarkCheckoutThroughput: 20 buyers check out at once, each in a loop of
// hold → checkout, with Payrail taking 400ms a charge, for 5 s. With 20 slots
// the bound is 20 / 0.4 s = 50 checkouts a second per instance. Side by side:
// without an Idempotency-Key, and with a new one on every checkout (as every
// client sends; the key is claimed, bound to the order and released: three
// more writes). It measures once; ns/op means nothing here.
//
//	go test -run '^$' -bench CheckoutThroughput ./internal/httpapi
func BenchmarkCheckoutThroughput(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(map[bool]string{false: "without-key", true: "with-key"}[keyed], func(b *testing.B) {
			benchmarkCheckoutThroughput(b, keyed)
		})
	}
}

func benchmarkCheckoutThroughput(b *testing.B, keyed bool) {
	p := startPayrailTB(b, 400*time.Millisecond)
	ts := startInstance(b, instance{env: limitEnv("PAYRAIL_URL", p.url,
		"STAGEDOOR_LIMIT_HOLD_BUYER", "100000/1s", "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "100000/1s",
		"STAGEDOOR_LIMIT_CHECKOUT_BUYER", "100000/1s")})
	org := newAccount(b, ts, auth.Organizer)
	event, seats := newEvent(b, ts, org, eventBody(100, 50))
	var next atomic.Int64
	var done, other atomic.Int64
	deadline := time.Now().Add(5 * time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	for range 20 {
		buyer := newAccount(b, ts, auth.Buyer)
		wg.Go(func() {
			for time.Now().Before(deadline) {
				n := next.Add(1)
				seat := seats[n%int64(len(seats))]
				rec := ts.serve("POST", "/v1/holds", holdBody(event, seat), buyer.bearer()...)
				if rec.Code != 201 {
					other.Add(1)
					continue
				}
				header := buyer.bearer()
				if keyed {
					header = append(header, "Idempotency-Key", fmt.Sprint("bench-", n))
				}
				rec = ts.serve("POST", "/v1/orders", orderBody(holdIDOf(rec), "tok_visa"), header...)
				if rec.Code == 201 {
					done.Add(1)
				} else {
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for b.Loop() {
	}
	b.ReportMetric(float64(done.Load())/elapsed.Seconds(), "checkouts/s")
	b.ReportMetric(float64(other.Load()), "not-201")
}

func holdIDOf(rec *httptest.ResponseRecorder) string {
	body := rec.Body.String()
	i := strings.Index(body, `"id":"`) + len(`"id":"`)
	return body[i : i+36]
}

// benchHold starts an instance with env (limitEnv) on a Payrail stub that
// answers after latency, and returns it with a buyer and the buyer's hold of
// one seat of a new event.
func benchHold(b *testing.B, latency time.Duration, env ...string) (*testServer, testAccount, string) {
	b.Helper()
	p := startPayrailTB(b, latency)
	ts := startInstance(b, instance{env: limitEnv(append([]string{"PAYRAIL_URL", p.url}, env...)...)})
	org, buyer := newAccount(b, ts, auth.Organizer), newAccount(b, ts, auth.Buyer)
	event, seats := newEvent(b, ts, org, eventBody(1, 2))
	rec := ts.serve("POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...)
	if rec.Code != 201 {
		b.Fatalf("hold = %d %s", rec.Code, rec.Body)
	}
	return ts, buyer, holdIDOf(rec)
}

// BenchmarkShedCheckout is the server time of a checkout refused because every
// slot is taken: the 503 that must come back at once. One slot, held by a
// checkout that Payrail keeps waiting; the refusal costs the same with 20. It
// reports the median and 99th percentile.
func BenchmarkShedCheckout(b *testing.B) {
	ts, buyer, holdID := benchHold(b, time.Minute, "STAGEDOOR_CHECKOUT_SLOTS", "1",
		"STAGEDOOR_PAYMENT_TIMEOUT", "2s", "STAGEDOOR_RECOVERY_AFTER", "6s",
		"STAGEDOOR_LIMIT_CHECKOUT_BUYER", "1000000/1s", "STAGEDOOR_LIMIT_CHECKOUT_HOLD", "1000000/1s")
	held := make(chan struct{})
	go func() { // takes the one slot until the payment deadline
		defer close(held)
		ts.serve("POST", "/v1/orders", orderBody(holdID, "tok_visa"), buyer.bearer()...)
	}()
	defer func() { <-held }()
	if !testenv.Poll(2*time.Second, 5*time.Millisecond, func() bool { // its order is written: it is inside
		var orders int
		err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM orders`).Scan(&orders)
		return err == nil && orders == 1
	}) {
		b.Fatal("the checkout that takes the slot did not start")
	}
	body := orderBody("00000000-0000-4000-8000-000000000000", "tok_visa")
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		rec := ts.serve("POST", "/v1/orders", body, buyer.bearer()...)
		times = append(times, time.Since(t0))
		if rec.Code != 503 {
			b.Fatalf("status %d, want 503", rec.Code)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRefusedPaymentAttempt is the server time of a payment attempt that
// checkout-buyer refuses (429), side by side with the floor of the HTTP stack
// (GET /healthz through the same rings): without an Idempotency-Key (no query:
// the denial cache answers), and with a new key each time (the key is claimed,
// then given up: two short writes, so that a retry of the same key that is
// still running is told 409 and spends no token). Not through the contract
// check, which would dwarf both.
//
//	go test -run '^$' -bench RefusedPaymentAttempt ./internal/httpapi
func BenchmarkRefusedPaymentAttempt(b *testing.B) {
	ts, tester, holdID := benchHold(b, 0, "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "1/1h",
		"STAGEDOOR_LIMIT_HOLD_BUYER", "1000000/1s", "STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "1000")
	body := orderBody(holdID, "tok_declined")
	pay := func(key string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/orders", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tester.token)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		ts.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := pay(""); code != 402 {
		b.Fatalf("the attempt the bucket allows = %d", code)
	}
	pay("") // refused: the denial is cached from here on
	b.Run("healthz", func(b *testing.B) {
		for b.Loop() {
			rec := httptest.NewRecorder()
			ts.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
	})
	for _, keyed := range []bool{false, true} {
		b.Run(map[bool]string{false: "429-without-key", true: "429-with-key"}[keyed], func(b *testing.B) {
			n := 0
			for b.Loop() {
				key := ""
				if keyed {
					n++
					key = fmt.Sprint("card-", n)
				}
				if code := pay(key); code != 429 {
					b.Fatalf("status %d, want 429", code)
				}
			}
		})
	}
}
