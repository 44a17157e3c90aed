package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// FuzzClientAddr: whatever the peer and X-Forwarded-For say, clientAddr never
// panics and answers either the peer or an address X-Forwarded-For named, and
// never an untrusted peer's X-Forwarded-For. Its seed corpus is in
// testdata/fuzz/FuzzClientAddr.
func FuzzClientAddr(f *testing.F) {
	for _, s := range [][2]string{
		{"203.0.113.9:5555", ""}, {"10.0.0.2:80", "1.1.1.1, 198.51.100.7"}, {"10.0.0.2:80", "198.51.100.7, 10.0.0.3"},
		{"10.0.0.2:80", "not-an-ip, 198.51.100.7"}, {"[fd00::1]:443", "2001:db8::1"}, {"10.0.0.2:80", "::ffff:192.0.2.1"},
		{"garbage", "1.1.1.1"}, {"10.0.0.2:80", ",,, ,"}, {"10.0.0.2:80", "10.0.0.3, 10.0.0.4"},
	} {
		f.Add(s[0], s[1])
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		got := clientAddr(r, trusted)
		p := parseHostAddr(peer)
		if got == p {
			return
		}
		if !isTrusted(p, trusted) {
			t.Fatalf("peer %q is not trusted, yet its X-Forwarded-For %q chose %v", peer, xff, got)
		}
		if !got.IsValid() {
			t.Fatalf("peer %q, X-Forwarded-For %q: an invalid address", peer, xff)
		}
		_ = addressKey(got) // a key for any address it answers
	})
}

// FuzzJSONBodies: every request body decoder of the API, fed anything, either
// decodes or refuses with a 400 problem, and the checks each handler runs on a
// decoded body before touching the database (emails, texts, event drafts,
// checkout requests) refuse only with 400s too: bad input is never a 500 and
// never a panic. Its seed corpus is in testdata/fuzz/FuzzJSONBodies.
func FuzzJSONBodies(f *testing.F) {
	for _, body := range []string{
		`{"email":"ada@example.com","password":"correct horse","name":"Ada"}`,
		`{"email":"ada@example.com","password":"correct horse","device_token":"dev_x"}`,
		`{"name":"Night","venue":"Hall","starts_at":"2099-01-01T20:00:00Z","on_sale_at":"2098-12-01T10:00:00Z","currency":"EUR",
		  "sections":[{"name":"Floor","rows":2,"seats_per_row":3,"price_cents":4500}],"waiting_room":{"admit_per_second":50}}`,
		`{"event_id":"0193a000-0000-7000-8000-000000000000","seat_ids":["0193a000-0000-7000-8000-000000000001"]}`,
		`{"hold_id":"0193a000-0000-7000-8000-000000000000","payment_token":"tok_visa"}`,
		`{"label":"North gate 1","event_id":""}`, `{"code":"SD1-abc"}`,
		`{"mode":"shadow","rate":10,"period_ms":60000,"burst":10}`,
		`{"name":"\u0000"}`, "{\"name\":\"\xff\"}", `{"a":1}`, `[]`, `{"sections":[{"rows":1e400}]}`, `{} {}`, ``,
		`{"HOLD_ID":"x","hold_id":"y"}`, `{"sections":[{"rows":1,"rows":2}],"waiting_room":{"Admit_Per_Second":1}}`,
	} {
		f.Add([]byte(body))
	}
	organizer := ids.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		refuse := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return false
			}
			if p, ok := problemFor(err); !ok || p.Status != 400 {
				t.Fatalf("%s of %q: %v, want a 400 problem", what, body, err)
			}
			return true
		}
		var account accountRequest
		refuse("account", decodeJSONBytes(body, &account))
		var login loginRequest
		if !refuse("login", decodeJSONBytes(body, &login)) {
			_, err := auth.ParseEmail(login.Email)
			refuse("login email", err)
		}
		var ev eventRequest
		if !refuse("event", decodeJSONBytes(body, &ev)) {
			_, err := ev.draft(organizer)
			refuse("event draft", err)
		}
		var order orderRequest
		if !refuse("order", decodeJSONBytes(body, &order)) {
			refuse("order check", checkout.Request{BuyerID: organizer, HoldID: order.HoldID, PaymentToken: order.PaymentToken}.Check())
		}
		var h holdRequest
		refuse("hold", decodeJSONBytes(body, &h))
		var key scannerKeyRequest
		refuse("scanner key", decodeJSONBytes(body, &key))
		var sc scanRequest
		refuse("scan", decodeJSONBytes(body, &sc))
		var change limitChangeRequest
		refuse("limit change", decodeJSONBytes(body, &change))
	})
}
