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
	resp, out := ts.doTB(t, "POST", "/v1/scanner-keys", body, org.bearer()...)
	if resp.StatusCode != 201 {
		t.Fatalf("create scanner key = %d %v", resp.StatusCode, out)
	}
	return out["id"].(string), out["key"].(string)
}

func TestScannerKeys(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Organizer)
	buyer := newAccount(t, ts, auth.Buyer)
	event, _ := newEvent(t, ts, org, eventBody(1, 2))
	othersEvent, _ := newEvent(t, ts, other, eventBody(1, 2))

	resp, k := ts.do(t, "POST", "/v1/scanner-keys", `{"label":" North gate "}`, org.bearer()...)
	key, _ := k["key"].(string)
	if resp.StatusCode != 201 || k["label"] != "North gate" || k["event_id"] != nil || k["revoked_at"] != nil ||
		!strings.HasPrefix(key, "sdk_") || len(key) != 47 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("POST /v1/scanner-keys = %d %v (Cache-Control %q)", resp.StatusCode, k, resp.Header.Get("Cache-Control"))
	}
	resp, bound := ts.do(t, "POST", "/v1/scanner-keys", fmt.Sprintf(`{"label":"Door 2","event_id":%q}`, strings.ToUpper(event)), org.bearer()...)
	if resp.StatusCode != 201 || bound["event_id"] != event || bound["key"] == key {
		t.Fatalf("a key bound to the organizer's own event = %d %v", resp.StatusCode, bound)
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
		if resp, p := ts.do(t, "POST", "/v1/scanner-keys", r.body, r.header...); resp.StatusCode != r.status || p["status"] != float64(r.status) {
			t.Errorf("POST %s = %d %v, want %d", r.body, resp.StatusCode, p, r.status)
		}
	}

	// Stored only as its SHA-256; never listed.
	var stored int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM scanner_keys WHERE key_hash = sha256($1::text::bytea)`, key).Scan(&stored); err != nil || stored != 1 {
		t.Errorf("keys stored as the key's SHA-256: %d (%v), want 1", stored, err)
	}
	resp, raw := ts.raw(t, "GET", "/v1/scanner-keys") // no credential
	if resp.StatusCode != 401 {
		t.Errorf("GET /v1/scanner-keys without a session = %d %s", resp.StatusCode, raw)
	}
	list := func(a testAccount) []any {
		t.Helper()
		resp, out := ts.do(t, "GET", "/v1/scanner-keys", "", a.bearer()...)
		keys, ok := out["scanner_keys"].([]any)
		if resp.StatusCode != 200 || !ok {
			t.Fatalf("GET /v1/scanner-keys = %d %v", resp.StatusCode, out)
		}
		for _, k := range keys {
			if _, shown := k.(map[string]any)["key"]; shown || strings.Contains(fmt.Sprint(k), "sdk_") {
				t.Errorf("the listing shows a key: %v", k)
			}
		}
		return keys
	}
	if keys := list(org); len(keys) != 2 || keys[0].(map[string]any)["id"] != k["id"] || keys[1].(map[string]any)["event_id"] != event {
		t.Errorf("the organizer's keys = %v", keys)
	}
	if keys := list(other); len(keys) != 0 {
		t.Errorf("another organizer sees %v", keys)
	}

	id := k["id"].(string)
	for _, path := range []string{"/v1/scanner-keys/" + id, "/v1/scanner-keys/" + ids.New(), "/v1/scanner-keys/nope"} {
		if resp, p := ts.do(t, "DELETE", path, "", other.bearer()...); resp.StatusCode != 404 || p["type"] != "/problems/not-found" {
			t.Errorf("DELETE %s by another organizer = %d %v, want 404", path, resp.StatusCode, p)
		}
	}
	for i := range 2 { // revoking twice is fine
		if resp, p := ts.do(t, "DELETE", "/v1/scanner-keys/"+id, "", org.bearer()...); resp.StatusCode != 204 {
			t.Fatalf("DELETE #%d = %d %v, want 204", i+1, resp.StatusCode, p)
		}
	}
	if keys := list(org); keys[0].(map[string]any)["revoked_at"] == nil || keys[1].(map[string]any)["revoked_at"] != nil {
		t.Errorf("after revoking the first key: %v", keys)
	}
}

// TestScannerKeyAuthentication: no key, a malformed or unknown key → 401; a
// revoked key → 401 at once, on this instance and on another.
func TestScannerKeyAuthentication(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	in := instance{db: testenv.Postgres(t), rdb: rdb, redisPrefix: prefix, env: limitEnv()}
	one, two := startInstance(t, in), startInstance(t, in)
	org := newAccount(t, one, auth.Organizer)
	id, key := newScannerKey(t, one, org, "")

	scanWith := func(ts *testServer, header ...string) (int, map[string]any) {
		resp, p := ts.do(t, "POST", "/v1/scans", `{"code":"NOSUCHCODE"}`, header...)
		return resp.StatusCode, p
	}
	for _, ts := range []*testServer{one, two} {
		if status, p := scanWith(ts, "X-Api-Key", key); status != 404 || p["result"] != "invalid" {
			t.Fatalf("a live key scanning an unknown code = %d %v, want 404 invalid", status, p)
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
		if status, p := scanWith(one, h...); status != 401 || p["type"] != "/problems/unauthorized" {
			t.Errorf("scan with %q = %d %v, want 401", h, status, p)
		}
	}

	if resp, p := one.do(t, "DELETE", "/v1/scanner-keys/"+id, "", org.bearer()...); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %v", resp.StatusCode, p)
	}
	for name, ts := range map[string]*testServer{"this instance": one, "another instance": two} {
		if status, p := scanWith(ts, "X-Api-Key", key); status != 401 {
			t.Errorf("a revoked key on %s = %d %v, want 401 at once", name, status, p)
		}
	}
}
