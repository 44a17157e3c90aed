package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestHostileTextIsRefusedEverywhere reproduces the seventh finding: a NUL
// byte or invalid UTF-8 in a name, an email, a label, a token or a header used
// to reach PostgreSQL (500), and control or bidi-override characters were
// stored. Now each is a 400 naming what is wrong, and nothing is written.
func TestHostileTextIsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event := func(name, venue, section string) string {
		return `{"name":"` + name + `","venue":"` + venue + `","starts_at":"2099-01-01T20:00:00Z",
			"sections":[{"name":"` + section + `","rows":1,"seats_per_row":1,"price_cents":100}]}`
	}
	key := as[struct {
		Key string `json:"key"`
	}](t, ts.request(t, "POST", "/v1/scanner-keys", `{"label":"Door"}`, org.bearer()...)).Key
	const nul, rlo, bel = `\u0000`, "\u202e", `\u0007`
	tests := []struct {
		name, method, path, body string
		header                   []string
		says                     string
	}{
		{"NUL in a buyer's name", "POST", "/v1/buyers", `{"email":"a@example.com","password":"correct horse","name":"A` + nul + `"}`, nil, "name must not contain control"},
		{"NUL in an email", "POST", "/v1/organizers", `{"email":"a` + nul + `@example.com","password":"correct horse","name":"A"}`, nil, "email"},
		{"bidi override in a name", "POST", "/v1/buyers", `{"email":"b@example.com","password":"correct horse","name":"gate ` + rlo + `1"}`, nil, "bidirectional"},
		{"invalid UTF-8 body", "POST", "/v1/buyers", "{\"email\":\"c@example.com\",\"password\":\"correct horse\",\"name\":\"\xff\xfe\"}", nil, "not valid UTF-8"},
		{"NUL in a login email", "POST", "/v1/login", `{"email":"a` + nul + `@example.com","password":"correct horse"}`, nil, "email"},
		{"60 KB login email", "POST", "/v1/login", `{"email":"` + strings.Repeat("a", 60<<10) + `@example.com","password":"correct horse"}`, nil, "longer than 254"},
		{"NUL in an event name", "POST", "/v1/events", event("Show"+nul, "Hall", "Floor"), org.bearer(), "name must not contain control"},
		{"bell in a venue", "POST", "/v1/events", event("Show", "Hall"+bel, "Floor"), org.bearer(), "venue must not contain control"},
		{"bidi override in a section", "POST", "/v1/events", event("Show", "Hall", "Floor"+rlo), org.bearer(), "sections[0].name must not contain bidirectional"},
		{"NUL in a scanner key label", "POST", "/v1/scanner-keys", `{"label":"North` + nul + `"}`, org.bearer(), "label must not contain control"},
		{"bidi override in a label", "POST", "/v1/scanner-keys", `{"label":"North ` + rlo + `1"}`, org.bearer(), "bidirectional"},
		{"NUL in a payment token", "POST", "/v1/orders", `{"hold_id":"` + ids.New() + `","payment_token":"tok` + nul + `"}`, buyer.bearer(), "payment_token must not contain control"},
		{"invalid UTF-8 Idempotency-Key", "POST", "/v1/orders", `{"hold_id":"` + ids.New() + `","payment_token":"tok_visa"}`,
			append(buyer.bearer(), "Idempotency-Key", "key-\xff\xfe"), "Idempotency-Key is not valid UTF-8"},
		{"NUL in a scanned code", "POST", "/v1/scans", `{"code":"SD1` + nul + `"}`, []string{"X-Api-Key", key}, "code must not contain control"},
		{"NUL in a hold's event id", "POST", "/v1/holds", `{"event_id":"` + ids.New() + nul + `","seat_ids":["x"]}`, buyer.bearer(), "event_id"},
	}
	before := rowCounts(t, ts)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ts.request(t, tt.method, tt.path, tt.body, tt.header...)
			if a.StatusCode != 400 {
				t.Fatalf("= %d %.300s, want 400", a.StatusCode, a.raw)
			}
			if p := a.problem(t); !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %s, want invalid-request saying %q", a.raw, tt.says)
			}
			if len(a.raw) > 2048 {
				t.Errorf("the problem is %d bytes long: the input came back whole", len(a.raw))
			}
		})
	}
	if after := rowCounts(t, ts); after != before {
		t.Errorf("rows (accounts, events, scanner keys, orders, keys) %v → %v: bad input wrote", before, after)
	}
}

func rowCounts(t *testing.T, ts *testServer) [5]int {
	t.Helper()
	var n [5]int
	err := ts.DB.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM accounts), (SELECT count(*) FROM events), (SELECT count(*) FROM scanner_keys),
		(SELECT count(*) FROM orders), (SELECT count(*) FROM idempotency_keys)`).Scan(&n[0], &n[1], &n[2], &n[3], &n[4])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
