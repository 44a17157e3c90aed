package payrail

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// refundWith sends POST /charges/{id}/refunds with key (none when empty) and
// body (none when empty).
func refundWith(t *testing.T, ts *httptest.Server, id, key, body string) (response, Refund) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/charges/"+id+"/refunds", strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	r, err := do(ts, req)
	if err != nil {
		t.Fatal(err)
	}
	var rf Refund
	_ = decodeInto(r.raw, &rf)
	return r, rf
}

// TestPartialRefunds: a charge of 4200 is refunded 1000 with key a, 2000 with
// key b; key a again replays its refund (200), with another amount is 422;
// 1500 more is 409 (only 1200 left); no body refunds the 1200 left, once
// (again: replayed); then nothing is left (a new key: 409). The lookup and
// the listing show refunded_cents and the refunds, each with its key, and
// GET /refunds lists them in order.
func TestPartialRefunds(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	c := mustPost(t, ts, "paid", chargeBody(TokenVisa)).body
	r, a := refundWith(t, ts, c.ID, "a", `{"amount_cents":1000}`)
	if r.status != 201 || a.AmountCents != 1000 || a.RefundKey != "a" || a.IdempotencyKey != "paid" {
		t.Fatalf("refund a = %d %s", r.status, r.raw)
	}
	if r, b := refundWith(t, ts, c.ID, "b", `{"amount_cents":2000}`); r.status != 201 || b.AmountCents != 2000 {
		t.Fatalf("refund b = %d %s", r.status, r.raw)
	}
	if r, again := refundWith(t, ts, c.ID, "a", `{"amount_cents":1000}`); r.status != 200 || again.ID != a.ID ||
		r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("refund a again = %d %s, want 200 with the same refund", r.status, r.raw)
	}
	if r, _ := refundWith(t, ts, c.ID, "a", `{"amount_cents":999}`); r.status != 422 {
		t.Errorf("key a with another amount = %d %s, want 422", r.status, r.raw)
	}
	if r, _ := refundWith(t, ts, c.ID, "c", `{"amount_cents":1500}`); r.status != 409 {
		t.Errorf("1500 of the 1200 left = %d %s, want 409", r.status, r.raw)
	}
	r, rest := refundWith(t, ts, c.ID, "", "")
	if r.status != 201 || rest.AmountCents != 1200 || rest.RefundKey != "" {
		t.Fatalf("the rest = %d %s, want 201 of 1200", r.status, r.raw)
	}
	if r, again := refundWith(t, ts, c.ID, "", ""); r.status != 200 || again.ID != rest.ID {
		t.Errorf("the rest again = %d %s, want it replayed", r.status, r.raw)
	}
	if r, _ := refundWith(t, ts, c.ID, "d", ""); r.status != 409 {
		t.Errorf("a refund of nothing left = %d %s, want 409", r.status, r.raw)
	}
	var found Charge
	get(t, ts, "/charges?idempotency_key=paid", &found)
	if found.RefundedCents != 4200 || len(found.Refunds) != 3 || found.Refunds[0].RefundKey != "a" || found.Refunds[2].ID != rest.ID {
		t.Errorf("the lookup = %+v, want refunded_cents 4200 and the three refunds in order", found)
	}
	var page struct{ Charges []Charge }
	get(t, ts, "/charges", &page)
	if len(page.Charges) != 1 || page.Charges[0].RefundedCents != 4200 || len(page.Charges[0].Refunds) != 3 {
		t.Errorf("the listing = %+v, want the charge with its refunds", page.Charges)
	}
	var refunds struct{ Refunds []Refund }
	get(t, ts, "/refunds", &refunds)
	if len(refunds.Refunds) != 3 || refunds.Refunds[1].RefundKey != "b" {
		t.Errorf("GET /refunds = %+v, want the three refunds in order", refunds.Refunds)
	}
	for _, body := range []string{`{"amount_cents":0}`, `{"amount_cents":-5}`, `{"amount":5}`, `{"amount_cents":1} {}`, `[1]`} {
		if r, _ := refundWith(t, ts, c.ID, "bad", body); r.status != 400 {
			t.Errorf("body %s = %d %s, want 400", body, r.status, r.raw)
		}
	}
}

// TestConcurrentRefundsNeverGiveBackMoreThanTheCharge: 30 refunds of 500 with
// keys of their own race on a charge of 4200: exactly 8 are made (4000), the
// others are 409.
func TestConcurrentRefundsNeverGiveBackMoreThanTheCharge(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	c := mustPost(t, ts, "paid", chargeBody(TokenVisa)).body
	var next atomic.Int32
	rs := race(t, 30, func() (response, error) {
		r, _ := refundWith(t, ts, c.ID, fmt.Sprint("k", next.Add(1)), `{"amount_cents":500}`)
		return r, nil
	})
	made, refused := 0, 0
	for _, r := range rs {
		switch r.status {
		case 201:
			made++
		case 409:
			refused++
		default:
			t.Errorf("a refund = %d %s", r.status, r.raw)
		}
	}
	var found Charge
	get(t, ts, "/charges?idempotency_key=paid", &found)
	if made != 8 || refused != 22 || found.RefundedCents != 4000 || len(found.Refunds) != 8 {
		t.Errorf("%d made, %d refused, refunded_cents %d with %d refunds; want 8, 22, 4000, 8",
			made, refused, found.RefundedCents, len(found.Refunds))
	}
}
