package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestJSONMembersInAnotherCaseOrTwiceAreRefused: a body whose member is named
// in another case than the contract's (HOLD_ID), or sent twice in one object
// (the last used to win), is a 400 naming the member, on every route with a
// body, and nothing is written.
func TestJSONMembersInAnotherCaseOrTwiceAreRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 3))
	tests := []refusedBody{
		{"a hold's EVENT_ID", "/v1/holds", `{"EVENT_ID":"` + event + `","seat_ids":["` + seats[0] + `"]}`, buyer.bearer(),
			`unknown field "EVENT_ID": field names are case-sensitive (did you mean "event_id"?)`},
		{"a hold's seat_ids twice", "/v1/holds", `{"event_id":"` + event + `","seat_ids":["` + seats[0] + `"],"seat_ids":["` + seats[1] + `"]}`,
			buyer.bearer(), `field "seat_ids" appears more than once`},
		{"a signup's email twice", "/v1/buyers", `{"email":"one@example.com","email":"two@example.com","password":"correct horse","name":"A"}`,
			nil, `field "email" appears more than once`},
		{"a login's Email", "/v1/login", `{"Email":"one@example.com","password":"correct horse"}`, nil, `unknown field "Email"`},
		{"an event's section's Rows", "/v1/events", `{"name":"N","venue":"V","starts_at":"2099-01-01T20:00:00Z",
			"sections":[{"name":"A","Rows":1,"seats_per_row":1,"price_cents":1}]}`, org.bearer(), `unknown field "sections[0].Rows"`},
		{"a scanner key's label twice", "/v1/scanner-keys", `{"label":"North","label":"South"}`, org.bearer(), `field "label" appears more than once`},
		{"an order's HOLD_ID", "/v1/orders", `{"HOLD_ID":"` + seats[0] + `","payment_token":"tok_visa"}`, buyer.bearer(), `unknown field "HOLD_ID"`},
	}
	before := rowCounts(t, ts)
	wantRefused(t, ts, tests)
	if after := rowCounts(t, ts); after != before {
		t.Errorf("rows (accounts, events, scanner keys, orders, keys) %v → %v: refused bodies wrote", before, after)
	}
	if n := heldSeats(t, ts, event); n != 0 {
		t.Errorf("%d seats held after refused holds", n)
	}
}

// refusedBody is a POST whose body the server refuses: 400 invalid-request,
// its detail saying says.
type refusedBody struct {
	name, path, body string
	header           []string
	says             string
}

// wantRefused sends each POST, a subtest each, and wants it refused.
func wantRefused(t *testing.T, ts *testServer, tests []refusedBody) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ts.request(t, "POST", tt.path, tt.body, tt.header...)
			if p := a.problem(t); a.StatusCode != 400 || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %d %s, want 400 invalid-request saying %s", a.StatusCode, a.raw, tt.says)
			}
		})
	}
}

// jsonBody is v as a JSON body.
func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInvisibleAndLookAlikeTextIsRefused: invisible characters (U+200B,
// U+2060, U+FEFF) in a name, a venue, a label or an email, and an email mixing
// scripts before the @ (a Cyrillic а among Latin letters), are 400s naming the
// field, and nothing is written; an email's look-alikes in another case, width
// or normalization form are the one account (409 email-taken, and they log in).
func TestInvisibleAndLookAlikeTextIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	register(t, ts, "buyer", "ada@example.com")
	signup := func(email, name string) string {
		return jsonBody(t, map[string]string{"email": email, "password": "correct horse", "name": name})
	}
	event := func(name, venue, section string) string {
		return jsonBody(t, map[string]any{"name": name, "venue": venue, "starts_at": "2099-01-01T20:00:00Z",
			"sections": []map[string]any{{"name": section, "rows": 1, "seats_per_row": 1, "price_cents": 100}}})
	}
	tests := []refusedBody{
		{"U+200B in an email", "/v1/buyers", signup("a\u200b@example.com", "A"), nil, "email must not contain invisible characters (U+200B at byte 1)"},
		{"a Cyrillic а in an email", "/v1/buyers", signup("\u0430da@example.com", "A"), nil, "email mixes scripts in \"\u0430da\" (Cyrillic and Latin)"},
		{"a Cyrillic а in a domain", "/v1/organizers", signup("ada@ex\u0430mple.com", "A"), nil, "email mixes scripts"},
		{"U+200B in a name", "/v1/buyers", signup("b@example.com", "Bob\u200b"), nil, "name must not contain invisible characters (U+200B"},
		{"U+2060 in a name", "/v1/buyers", signup("b@example.com", "B\u2060ob"), nil, "name must not contain invisible characters (U+2060"},
		{"U+FEFF in a name", "/v1/organizers", signup("b@example.com", "\ufeffBob"), nil, "name must not contain invisible characters (U+FEFF"},
		{"a name of nothing visible", "/v1/buyers", signup("b@example.com", "\u200b\u2060"), nil, "name must not contain invisible characters"},
		{"U+200B in a login email", "/v1/login", loginBody("ada\u200b@example.com", "correct horse"), nil, "email must not contain invisible characters"},
		{"U+FEFF in an event's name", "/v1/events", event("Show\ufeff", "Hall", "Floor"), org.bearer(), "name must not contain invisible characters (U+FEFF"},
		{"U+200B in a venue", "/v1/events", event("Show", "Ha\u200bll", "Floor"), org.bearer(), "venue must not contain invisible characters"},
		{"U+2060 in a section", "/v1/events", event("Show", "Hall", "Floor\u2060"), org.bearer(), "sections[0].name must not contain invisible characters"},
		{"U+200B in a label", "/v1/scanner-keys", jsonBody(t, map[string]string{"label": "North\u200b"}), org.bearer(), "label must not contain invisible characters"},
	}
	before := rowCounts(t, ts)
	wantRefused(t, ts, tests)
	for _, email := range []string{"ADA@EXAMPLE.COM", "\uff41\uff44\uff41@example.com"} { // upper case; full width
		if a := ts.request(t, "POST", "/v1/buyers", signup(email, "A"), nil...); a.StatusCode != 409 || !a.problem(t).is("email-taken") {
			t.Errorf("signing up as %q = %d %s, want 409 email-taken: it is ada@example.com", email, a.StatusCode, a.raw)
		}
		if a := ts.request(t, "POST", "/v1/login", loginBody(email, "correct horse")); a.StatusCode != 200 {
			t.Errorf("logging in as %q = %d %s, want ada@example.com's session", email, a.StatusCode, a.raw)
		}
	}
	if after := rowCounts(t, ts); after != before {
		t.Errorf("rows (accounts, events, scanner keys, orders, keys) %v → %v: refused text wrote", before, after)
	}

	// é typed as e and a combining accent is the same address as é.
	a := ts.request(t, "POST", "/v1/buyers", signup("rene\u0301e@example.com", "Rene\u0301e"), nil...)
	if acct := as[accountJSON](t, a); a.StatusCode != 201 || acct.Email != "ren\u00e9e@example.com" || acct.Name != "Ren\u00e9e" {
		t.Fatalf("signup decomposed = %d %s, want 201 with email and name in NFC", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "POST", "/v1/organizers", signup("ren\u00e9e@example.com", "R"), nil...); a.StatusCode != 409 {
		t.Errorf("the same email composed = %d %s, want 409 email-taken", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "POST", "/v1/login", loginBody("ren\u00e9e@example.com", "correct horse")); a.StatusCode != 200 {
		t.Errorf("login composed = %d %s, want 200", a.StatusCode, a.raw)
	}
}
