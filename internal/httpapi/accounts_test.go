package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

func register(t *testing.T, ts *testServer, kind, email string) {
	t.Helper()
	resp, body := ts.do(t, "POST", "/v1/"+kind+"s",
		fmt.Sprintf(`{"email":%q,"password":"correct horse","name":"Test"}`, email))
	if resp.StatusCode != 201 {
		t.Fatalf("register %s: %d %v", email, resp.StatusCode, body)
	}
}

func loginBody(email, password string) string {
	return fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)
}

func login(t *testing.T, ts *testServer, email string) string {
	t.Helper()
	resp, body := ts.do(t, "POST", "/v1/login", loginBody(email, "correct horse"))
	if resp.StatusCode != 200 {
		t.Fatalf("login %s: %d %v", email, resp.StatusCode, body)
	}
	return body["token"].(string)
}

func TestAccountsAndSessions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	resp, body := ts.do(t, "POST", "/v1/buyers", `{"email":" Ada@Example.com","password":"correct horse","name":"Ada"}`)
	if resp.StatusCode != 201 || body["email"] != "ada@example.com" || body["id"] == "" || body["name"] != "Ada" {
		t.Fatalf("POST /v1/buyers = %d %v", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "POST", "/v1/organizers", `{"email":"ADA@example.com","password":"another one","name":"Ada Org"}`)
	if resp.StatusCode != 409 || body["type"] != "/problems/email-taken" {
		t.Errorf("taken email = %d %v", resp.StatusCode, body)
	}
	register(t, ts, "organizer", "org@example.com")

	resp, body = ts.do(t, "POST", "/v1/login", loginBody("ada@EXAMPLE.com", "correct horse"))
	principal, _ := body["principal"].(map[string]any)
	if resp.StatusCode != 200 || body["token_type"] != "Bearer" || body["expires_at"] == nil ||
		principal["kind"] != "buyer" || principal["email"] != "ada@example.com" {
		t.Fatalf("login = %d %v", resp.StatusCode, body)
	}
	token := body["token"].(string)

	resp, body = ts.do(t, "GET", "/v1/me", "", "Authorization", "Bearer "+token)
	if resp.StatusCode != 200 || body["kind"] != "buyer" || body["id"] != principal["id"] {
		t.Errorf("GET /v1/me = %d %v", resp.StatusCode, body)
	}
	for _, header := range []string{"", "Bearer", "Bearer nonsense", "Basic " + token} {
		resp, body = ts.do(t, "GET", "/v1/me", "", "Authorization", header)
		if resp.StatusCode != 401 || body["type"] != "/problems/unauthorized" {
			t.Errorf("GET /v1/me with %q = %d %v", header, resp.StatusCode, body)
		}
	}

	for _, tt := range []struct{ email, password string }{
		{"ada@example.com", "wrong password"},
		{"nobody@example.com", "correct horse"},
	} {
		resp, body = ts.do(t, "POST", "/v1/login", loginBody(tt.email, tt.password))
		if resp.StatusCode != 401 || body["type"] != "/problems/invalid-credentials" {
			t.Errorf("login %s/%s = %d %v", tt.email, tt.password, resp.StatusCode, body)
		}
	}
}

// TestLogoutIsSeenByAnotherInstanceAtOnce: two instances on one database.
func TestLogoutIsSeenByAnotherInstanceAtOnce(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	one := startInstance(t, instance{db: db})
	two := startInstance(t, instance{db: db})
	register(t, one, "buyer", "b@example.com")
	token := login(t, one, "b@example.com")
	if resp, _ := two.do(t, "GET", "/v1/me", "", "Authorization", "Bearer "+token); resp.StatusCode != 200 {
		t.Fatalf("the second instance does not know the session: %d", resp.StatusCode)
	}
	if resp, _ := one.do(t, "POST", "/v1/logout", "", "Authorization", "Bearer "+token); resp.StatusCode != 204 {
		t.Fatalf("logout = %d", resp.StatusCode)
	}
	if resp, _ := two.do(t, "GET", "/v1/me", "", "Authorization", "Bearer "+token); resp.StatusCode != 401 {
		t.Errorf("after logout the second instance answers %d, want 401", resp.StatusCode)
	}
}

// TestEleventhLoginFromOneAddress: refused with Retry-After: 6, and no bcrypt
// hash ran for it.
func TestEleventhLoginFromOneAddress(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	register(t, ts, "buyer", "b@example.com")
	for i := 1; i <= 10; i++ {
		resp, body := ts.do(t, "POST", "/v1/login", loginBody("b@example.com", "wrong password"))
		if resp.StatusCode != 401 {
			t.Fatalf("attempt %d = %d %v", i, resp.StatusCode, body)
		}
	}
	hashes := ts.Auth.Hashes()
	resp, body := ts.do(t, "POST", "/v1/login", loginBody("b@example.com", "correct horse"))
	if resp.StatusCode != 429 || body["limit"] != "login-address" || resp.Header.Get("Retry-After") != "6" {
		t.Fatalf("11th attempt = %d %v Retry-After %q, want 429 login-address, Retry-After: 6",
			resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if got := ts.Auth.Hashes() - hashes; got != 0 {
		t.Errorf("the refused login computed %d bcrypt hashes, want 0", got)
	}
}

// TestForwardedForIsBelievedOnlyFromTrustedProxies: a client rotating
// X-Forwarded-For still shares one bucket; behind a trusted proxy, two clients
// get two buckets.
func TestForwardedForIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	attempt := func(ts *testServer, forwardedFor string) int {
		resp, _ := ts.do(t, "POST", "/v1/login", loginBody("x@example.com", "wrong password"),
			"X-Forwarded-For", forwardedFor)
		return resp.StatusCode
	}

	direct := newTestServer(t, nil, nil, nil)
	for i := range 10 {
		attempt(direct, fmt.Sprintf("198.51.100.%d", i))
	}
	if got := attempt(direct, "198.51.100.77"); got != 429 {
		t.Errorf("rotating X-Forwarded-For from an untrusted peer: %d, want 429 (one bucket)", got)
	}

	proxied := newTestServer(t, map[string]string{"STAGEDOOR_TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"}, nil, nil)
	for range 10 {
		attempt(proxied, "198.51.100.1")
	}
	if got := attempt(proxied, "198.51.100.1"); got != 429 {
		t.Errorf("client A's 11th behind the proxy: %d, want 429", got)
	}
	if got := attempt(proxied, "198.51.100.2"); got != 401 {
		t.Errorf("client B behind the same proxy: %d, want 401 (a bucket of its own)", got)
	}
	if got := attempt(proxied, "203.0.113.5, 198.51.100.1"); got != 429 {
		t.Errorf("client A prepending a fake address: %d, want 429 (rightmost untrusted entry)", got)
	}
}

// TestLoginEmailLimitAcrossAddresses: 21 attempts on one email from 21
// addresses in an hour; the 21st is refused by login-email.
func TestLoginEmailLimitAcrossAddresses(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"}, nil, nil)
	register(t, ts, "buyer", "victim@example.com")
	for i := 1; i <= 20; i++ {
		resp, _ := ts.do(t, "POST", "/v1/login", loginBody("Victim@example.com", "guess"+fmt.Sprint(i)+"xxxxx"),
			"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
		if resp.StatusCode != 401 {
			t.Fatalf("attempt %d = %d", i, resp.StatusCode)
		}
	}
	hashes := ts.Auth.Hashes()
	resp, body := ts.do(t, "POST", "/v1/login", loginBody("victim@example.com", "correct horse"),
		"X-Forwarded-For", "198.51.100.21")
	if resp.StatusCode != 429 || body["limit"] != "login-email" {
		t.Fatalf("21st = %d %v, want 429 login-email", resp.StatusCode, body)
	}
	if ts.Auth.Hashes() != hashes {
		t.Error("a login refused by login-email computed a hash")
	}
	if resp, _ := ts.do(t, "POST", "/v1/login", loginBody("other@example.com", "whatever12"),
		"X-Forwarded-For", "198.51.100.21"); resp.StatusCode != 401 {
		t.Errorf("another email from that address = %d, want 401", resp.StatusCode)
	}
}

// TestLoginLimitsFallBackWhenRedisStops: with Redis stopped, the in-process
// bucket still refuses the 11th attempt, counted fallback_denied.
func TestLoginLimitsFallBackWhenRedisStops(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	ts := newTestServer(t, nil, nil, redisClient(t, private.URL))
	register(t, ts, "buyer", "b@example.com")
	private.Stop()

	for i := 1; i <= 10; i++ {
		if resp, body := ts.do(t, "POST", "/v1/login", loginBody("b@example.com", "wrong password")); resp.StatusCode != 401 {
			t.Fatalf("attempt %d with Redis down = %d %v", i, resp.StatusCode, body)
		}
	}
	resp, body := ts.do(t, "POST", "/v1/login", loginBody("b@example.com", "correct horse"))
	if resp.StatusCode != 429 || body["limit"] != "login-address" {
		t.Fatalf("11th with Redis down = %d %v, want 429 login-address", resp.StatusCode, body)
	}
	metric := metricValue(t, ts, `stagedoor_ratelimit_decisions_total{decision="fallback_denied",limit="login-address"}`)
	if metric != "1" {
		t.Errorf("fallback_denied counted %q, want 1", metric)
	}
}

// metricValue reads one sample from the server's /metrics page.
func metricValue(t *testing.T, ts *testServer, series string) string {
	t.Helper()
	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimPrefix(line, series+" ")
		}
	}
	return ""
}

func TestAccountBadInput(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	tests := []struct {
		name, path, body, says string
	}{
		{"missing email", "/v1/buyers", `{"password":"correct horse","name":"A"}`, "email is required"},
		{"missing password", "/v1/buyers", `{"email":"a@example.com","name":"A"}`, "password is required"},
		{"missing name", "/v1/organizers", `{"email":"a@example.com","password":"correct horse"}`, "name is required"},
		{"73-byte password", "/v1/buyers", `{"email":"a@example.com","password":"` + strings.Repeat("p", 73) + `","name":"A"}`, "at most 72 bytes"},
		{"short password", "/v1/buyers", `{"email":"a@example.com","password":"short","name":"A"}`, "at least 10"},
		{"bad email", "/v1/buyers", `{"email":"a-at-example","password":"correct horse","name":"A"}`, "not an address"},
		{"malformed JSON", "/v1/buyers", `{"email":"a@example.com",`, "JSON"},
		{"unknown field", "/v1/buyers", `{"email":"a@example.com","password":"correct horse","name":"A","role":"admin"}`, `unknown field "role"`},
		{"70 KiB body", "/v1/buyers", `{"email":"a@example.com","password":"correct horse","name":"` + strings.Repeat("A", 70<<10) + `"}`, "64 KiB"},
		{"login without password", "/v1/login", `{"email":"a@example.com"}`, "required"},
		{"login with 73-byte password", "/v1/login", `{"email":"a@example.com","password":"` + strings.Repeat("p", 73) + `"}`, "at most 72 bytes"},
		{"login unknown field", "/v1/login", `{"email":"a@example.com","password":"correct horse","remember":true}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.do(t, "POST", tt.path, tt.body)
			detail, _ := body["detail"].(string)
			if resp.StatusCode != 400 || body["type"] != "/problems/invalid-request" || !strings.Contains(detail, tt.says) {
				t.Errorf("= %d %v, want 400 invalid-request saying %q", resp.StatusCode, body, tt.says)
			}
		})
	}
	var accounts int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM accounts`).Scan(&accounts); err != nil || accounts != 0 {
		t.Errorf("%d accounts stored after bad input (%v), want 0", accounts, err)
	}
}
