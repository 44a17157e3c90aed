package payrail

import (
	"net/http"
	"strings"
	"testing"
)

// TestTheAPIKeyIsRequired: with an API key, every route but GET /healthz
// answers 401 to a request without it, or with another, or in another scheme,
// and does nothing: no charge is made. With it, the stub serves as before; the
// log never holds the key.
func TestTheAPIKeyIsRequired(t *testing.T) {
	t.Parallel()
	const key = "prk_test_0123456789abcdef"
	s, ts, logs := start(t, Config{APIKey: key})
	send := func(method, path, auth string) response {
		t.Helper()
		var body *strings.Reader
		if method == http.MethodPost {
			body = strings.NewReader(chargeBody(TokenVisa))
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, ts.URL+path, body)
		req.Header.Set("Idempotency-Key", "k")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		r, err := do(ts, req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return r
	}
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Bearer " + key + "x", "Basic " + key, "bearer " + key, key} {
		for _, r := range []struct{ method, path string }{
			{"POST", "/charges"}, {"GET", "/charges?idempotency_key=k"}, {"GET", "/charges"},
			{"POST", "/charges/ch_x/refunds"}, {"GET", "/refunds"},
		} {
			if a := send(r.method, r.path, auth); a.status != 401 || a.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %q = %d %s, want 401", r.method, r.path, auth, a.status, a.raw)
			}
		}
	}
	if n := len(charges(t, s)); n != 0 {
		t.Fatalf("%d charges made without the key", n)
	}
	if a := send("GET", "/healthz", ""); a.status != 200 {
		t.Errorf("GET /healthz without the key = %d, want 200: a health check needs none", a.status)
	}
	if a := send("POST", "/charges", "Bearer "+key); a.status != 201 {
		t.Errorf("a charge with the key = %d %s", a.status, a.raw)
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the log holds the API key:\n%s", logs.String())
	}
}

// TestRefundsAreListed: GET /refunds lists every refund, with its charge's
// Idempotency-Key, in the order they were made, a page at a time: how a
// client learns of refunds it did not make.
func TestRefundsAreListed(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	var ids []string
	for _, key := range []string{"a", "b", "c"} {
		c := mustPost(t, ts, key, chargeBody(TokenVisa))
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/charges/"+c.body.ID+"/refunds", nil)
		if r, err := do(ts, req); err != nil || r.status != 201 {
			t.Fatalf("refund: %v %d %s", err, r.status, r.raw)
		}
		ids = append(ids, c.body.ID)
	}
	mustPost(t, ts, "not-refunded", chargeBody(TokenVisa))
	var page struct{ Refunds []Refund }
	get(t, ts, "/refunds?limit=2", &page)
	if len(page.Refunds) != 2 || page.Refunds[0].ChargeID != ids[0] || page.Refunds[0].IdempotencyKey != "a" ||
		page.Refunds[1].IdempotencyKey != "b" || !strings.HasPrefix(page.Refunds[0].ID, "re_") {
		t.Fatalf("the first page = %+v", page.Refunds)
	}
	last := page.Refunds[1]
	var next struct{ Refunds []Refund }
	get(t, ts, "/refunds?created_after="+last.CreatedAt.Format("2006-01-02T15:04:05.999999999Z07:00")+"&after_id="+last.ID, &next)
	if len(next.Refunds) != 1 || next.Refunds[0].IdempotencyKey != "c" {
		t.Errorf("the next page = %+v, want the third refund alone", next.Refunds)
	}
	if r := get(t, ts, "/refunds?limit=0", nil); r.status != 400 {
		t.Errorf("limit=0 = %d, want 400", r.status)
	}
}
