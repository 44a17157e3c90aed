package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// newScannerKey creates a scanner key of the organizer, bound to eventID unless
// it is empty, and returns its id and the key.
func newScannerKey(t testing.TB, ts *testServer, org testAccount, eventID string) (string, string) {
	t.Helper()
	body := fmt.Sprintf(`{"label":"Gate %s"}`, ids.New()[:8])
	if eventID != "" {
		body = fmt.Sprintf(`{"label":"Gate %s","event_id":%q}`, ids.New()[:8], eventID)
	}
	a := ts.request(t, "POST", "/v1/scanner-keys", body, org.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("create scanner key = %d %s", a.StatusCode, a.raw)
	}
	k := as[scannerKeyJSON](t, a)
	return k.ID, k.Key
}

func TestScannerKeys(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, _ := newEvent(t, ts, org, eventBody(1, 2))
	othersEvent, _ := newEvent(t, ts, other, eventBody(1, 2))

	a := ts.request(t, "POST", "/v1/scanner-keys", `{"label":" North gate "}`, org.bearer()...)
	k := as[scannerKeyJSON](t, a)
	key := k.Key
	if a.StatusCode != 201 || k.Label != "North gate" || k.EventID != nil || k.RevokedAt != nil ||
		!strings.HasPrefix(key, "sdk_") || len(key) != 47 || a.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("POST /v1/scanner-keys = %d %s (Cache-Control %q)", a.StatusCode, a.raw, a.Header.Get("Cache-Control"))
	}
	a = ts.request(t, "POST", "/v1/scanner-keys", fmt.Sprintf(`{"label":"Door 2","event_id":%q}`, strings.ToUpper(event)), org.bearer()...)
	if bound := as[scannerKeyJSON](t, a); a.StatusCode != 201 || bound.EventID == nil || *bound.EventID != event || bound.Key == key {
		t.Fatalf("a key bound to the organizer's own event = %d %s", a.StatusCode, a.raw)
	}

	refused := []struct {
		body   string
		header []string
		status int
	}{
		{fmt.Sprintf(`{"label":"x","event_id":%q}`, othersEvent), org.bearer(), 400}, // another organizer's event
		{fmt.Sprintf(`{"label":"x","event_id":%q}`, ids.New()), org.bearer(), 400},   // no such event
		{`{"label":"x","event_id":"42"}`, org.bearer(), 400},
		{`{"label":"  "}`, org.bearer(), 400},
		{`{"label":"` + strings.Repeat("x", 101) + `"}`, org.bearer(), 400},
		{`{"label":"x","key":"sdk_mine"}`, org.bearer(), 400}, // unknown field
		{`{"label":"x"}`, buyer.bearer(), 403},
		{`{"label":"x"}`, nil, 401},
	}
	for _, r := range refused {
		if a := ts.request(t, "POST", "/v1/scanner-keys", r.body, r.header...); a.StatusCode != r.status || a.problem(t).Status != r.status {
			t.Errorf("POST %s = %d %s, want %d", r.body, a.StatusCode, a.raw, r.status)
		}
	}

	// Stored only as its SHA-256; never listed.
	var stored int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM scanner_keys WHERE key_hash = sha256($1::text::bytea)`, key).Scan(&stored); err != nil || stored != 1 {
		t.Errorf("keys stored as the key's SHA-256: %d (%v), want 1", stored, err)
	}
	if a := ts.request(t, "GET", "/v1/scanner-keys", ""); a.StatusCode != 401 { // no credential
		t.Errorf("GET /v1/scanner-keys without a session = %d %s", a.StatusCode, a.raw)
	}
	list := func(who testAccount) []scannerKeyJSON {
		t.Helper()
		a := ts.request(t, "GET", "/v1/scanner-keys", "", who.bearer()...)
		if a.StatusCode != 200 || strings.Contains(string(a.raw), `"key"`) || strings.Contains(string(a.raw), "sdk_") {
			t.Fatalf("GET /v1/scanner-keys = %d %s; want no key shown", a.StatusCode, a.raw)
		}
		return as[scannerKeyList](t, a).ScannerKeys
	}
	if keys := list(org); len(keys) != 2 || keys[0].ID != k.ID || keys[1].EventID == nil || *keys[1].EventID != event {
		t.Errorf("the organizer's keys = %+v", keys)
	}
	if keys := list(other); len(keys) != 0 {
		t.Errorf("another organizer sees %+v", keys)
	}

	for _, path := range []string{"/v1/scanner-keys/" + k.ID, "/v1/scanner-keys/" + ids.New(), "/v1/scanner-keys/nope"} {
		if a := ts.request(t, "DELETE", path, "", other.bearer()...); a.StatusCode != 404 || !a.problem(t).is("not-found") {
			t.Errorf("DELETE %s by another organizer = %d %s, want 404", path, a.StatusCode, a.raw)
		}
	}
	for i := range 2 { // revoking twice is fine
		if a := ts.request(t, "DELETE", "/v1/scanner-keys/"+k.ID, "", org.bearer()...); a.StatusCode != 204 {
			t.Fatalf("DELETE #%d = %d %s, want 204", i+1, a.StatusCode, a.raw)
		}
	}
	if keys := list(org); keys[0].RevokedAt == nil || keys[1].RevokedAt != nil {
		t.Errorf("after revoking the first key: %+v", keys)
	}
}

// TestScannerKeyAuthentication: no key, a malformed or unknown key → 401; a
// revoked key → 401 at once on this instance, and on another as soon as the
// revocation's notification arrives (well within a second, the cache's bound).
func TestScannerKeyAuthentication(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	in := instance{db: testenv.Postgres(t), rdb: rdb, redisPrefix: prefix, env: limitEnv()}
	one, two := startInstance(t, in), startInstance(t, in)
	org := newAccount(t, one, auth.Organizer)
	id, key := newScannerKey(t, one, org, "")

	scanWith := func(ts *testServer, header ...string) answer {
		return ts.request(t, "POST", "/v1/scans", `{"code":"NOSUCHCODE"}`, header...)
	}
	for _, ts := range []*testServer{one, two} {
		if a := scanWith(ts, "X-Api-Key", key); a.StatusCode != 404 || a.problem(t).Result != "invalid" {
			t.Fatalf("a live key scanning an unknown code = %d %s, want 404 invalid", a.StatusCode, a.raw)
		}
	}
	bad := [][]string{
		nil,
		{"X-Api-Key", ""},
		{"X-Api-Key", "sdk_short"},
		{"X-Api-Key", key[:46] + "!"},
		{"X-Api-Key", "sdk_" + strings.Repeat("A", 43)}, // well formed, unknown
		{"X-Api-Key", "  " + strings.ToUpper(key)},
		org.bearer(), // a session is no scanner key
	}
	for _, h := range bad {
		if a := scanWith(one, h...); a.StatusCode != 401 || !a.problem(t).is("unauthorized") {
			t.Errorf("scan with %q = %d %s, want 401", h, a.StatusCode, a.raw)
		}
	}
	// The key was verified a moment ago, so this instance trusts it from its
	// cache for a second: it is still no session token.
	if a := scanWith(one, "X-Api-Key", key); a.StatusCode != 404 {
		t.Fatalf("a live key = %d %s, want 404 invalid", a.StatusCode, a.raw)
	}
	for _, path := range []string{"/v1/me", "/v1/scanner-keys"} {
		if a := one.request(t, "GET", path, "", "Authorization", "Bearer "+key); a.StatusCode != 401 || !a.problem(t).is("unauthorized") {
			t.Errorf("GET %s with the scanner key as a bearer token = %d %s, want 401", path, a.StatusCode, a.raw)
		}
	}

	if a := one.request(t, "DELETE", "/v1/scanner-keys/"+id, "", org.bearer()...); a.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", a.StatusCode, a.raw)
	}
	if a := scanWith(one, "X-Api-Key", key); a.StatusCode != 401 {
		t.Errorf("a revoked key on this instance = %d %s, want 401 at once", a.StatusCode, a.raw)
	}
	refusedSoon(t, "a revoked key refused (401) on another instance", func() answer { return scanWith(two, "X-Api-Key", key) })
}
