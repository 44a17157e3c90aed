package payrail

import (
	"strings"
	"testing"
)

// TestBadInputIs400AndChargesNothing: one server takes every bad request, each
// with a key of its own ("k" is the case's name), and charges for none.
func TestBadInputIs400AndChargesNothing(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{})
	big := `{"amount_cents":1,"currency":"EUR","token":"` + strings.Repeat("x", 64<<10) + `"}`
	for _, tc := range []struct{ name, key, body string }{
		{"no idempotency key", "", chargeBody(TokenVisa)},
		{"idempotency key over 255", strings.Repeat("k", 256), chargeBody(TokenVisa)},
		{"malformed JSON", "k", `{"amount_cents":1,`},
		{"not an object", "k", `[1,2]`},
		{"empty body", "k", ``},
		{"unknown field", "k", `{"amount_cents":1,"currency":"EUR","token":"tok_visa","tip":5}`},
		{"trailing data", "k", chargeBody(TokenVisa) + ` {}`},
		{"missing amount", "k", `{"currency":"EUR","token":"tok_visa"}`},
		{"null amount", "k", `{"amount_cents":null,"currency":"EUR","token":"tok_visa"}`},
		{"negative amount", "k", `{"amount_cents":-1,"currency":"EUR","token":"tok_visa"}`},
		{"fractional amount", "k", `{"amount_cents":1.5,"currency":"EUR","token":"tok_visa"}`},
		{"amount as a string", "k", `{"amount_cents":"100","currency":"EUR","token":"tok_visa"}`},
		{"missing currency", "k", `{"amount_cents":1,"token":"tok_visa"}`},
		{"currency not three letters", "k", `{"amount_cents":1,"currency":"EURO","token":"tok_visa"}`},
		{"missing token", "k", `{"amount_cents":1,"currency":"EUR"}`},
		{"empty token", "k", `{"amount_cents":1,"currency":"EUR","token":""}`},
		{"body over 64 KiB", "k", big},
		{"64 KiB of trailing spaces", "k", chargeBody(TokenVisa) + strings.Repeat(" ", 64<<10)},
	} {
		if tc.key == "k" {
			tc.key = tc.name
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustPost(t, ts, tc.key, tc.body)
			if r.status != 400 || r.body.Error == "" || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %q %s, want 400 with an error", r.status, r.header.Get("Content-Type"), r.raw)
			}
			for _, c := range charges(t, s) {
				if c.IdempotencyKey == tc.key {
					t.Errorf("a charge for the bad request: %+v", c)
				}
			}
			// Nothing is stored for the key: a good request with it still charges.
			if tc.key != "" && len(tc.key) <= MaxKeyLength {
				if r := mustPost(t, ts, tc.key, chargeBody(TokenVisa)); r.status != 201 {
					t.Errorf("a good request after: %d %s, want 201", r.status, r.raw)
				}
			}
		})
	}
}

func TestZeroAmountIsAllowed(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	if r := mustPost(t, ts, "free", `{"amount_cents":0,"currency":"EUR","token":"tok_visa"}`); r.status != 201 {
		t.Errorf("got %d %s, want 201", r.status, r.raw)
	}
}

func TestFindAndListCharges(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	var list struct{ Charges []Charge }
	if g := get(t, ts, "/charges", &list); g.status != 200 || list.Charges == nil || len(list.Charges) != 0 ||
		!strings.Contains(string(g.raw), `"charges":[]`) {
		t.Fatalf("empty list: %d %s", g.status, g.raw)
	}
	var ids []string
	for _, tc := range []struct{ key, token string }{{"a", TokenVisa}, {"b", TokenDeclined}, {"c", TokenError}, {"d", TokenVisa}} {
		ids = append(ids, mustPost(t, ts, tc.key, chargeBody(tc.token)).body.ID)
	}
	get(t, ts, "/charges", &list)
	want := []struct {
		key    string
		status Status
	}{{"a", StatusSucceeded}, {"b", StatusDeclined}, {"d", StatusSucceeded}}
	if len(list.Charges) != len(want) {
		t.Fatalf("listed %+v, want %d charges", list.Charges, len(want))
	}
	for i, w := range want {
		c := list.Charges[i]
		if c.IdempotencyKey != w.key || c.Status != w.status || c.AmountCents != 4200 || c.Currency != "EUR" {
			t.Errorf("charge %d: %+v, want key %s %s", i, c, w.key, w.status)
		}
	}
	if list.Charges[0].ID != ids[0] || list.Charges[2].ID != ids[3] {
		t.Errorf("listed ids %+v, posted %v", list.Charges, ids)
	}

	var c Charge
	if g := get(t, ts, "/charges?idempotency_key=b", &c); g.status != 200 || c.ID != ids[1] || c.Status != StatusDeclined {
		t.Errorf("GET ?idempotency_key=b: %d %s", g.status, g.raw)
	}
	for path, code := range map[string]int{
		"/charges?idempotency_key=c":    404, // a 500 records nothing
		"/charges?idempotency_key=nope": 404,
		"/charges?idempotency_key=":     400,
	} {
		var e reply
		if g := get(t, ts, path, &e); g.status != code || e.Error == "" {
			t.Errorf("GET %s: %d %s, want %d with an error", path, g.status, g.raw, code)
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{Latency: 1 << 40}) // latency is for charges only
	var body map[string]string
	if g := get(t, ts, "/healthz", &body); g.status != 200 || body["status"] != "ok" {
		t.Errorf("GET /healthz: %d %s", g.status, g.raw)
	}
}
