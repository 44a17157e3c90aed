package httpapi_test

import (
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
	tests := []struct {
		name, path, body string
		header           []string
		says             string
	}{
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ts.request(t, "POST", tt.path, tt.body, tt.header...)
			if p := a.problem(t); a.StatusCode != 400 || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %d %s, want 400 invalid-request saying %s", a.StatusCode, a.raw, tt.says)
			}
		})
	}
	if after := rowCounts(t, ts); after != before {
		t.Errorf("rows (accounts, events, scanner keys, orders, keys) %v → %v: refused bodies wrote", before, after)
	}
	if n := heldSeats(t, ts, event); n != 0 {
		t.Errorf("%d seats held after refused holds", n)
	}
}
