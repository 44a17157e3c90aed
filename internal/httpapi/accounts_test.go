package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func register(t *testing.T, ts *testServer, kind, email string) {
	t.Helper()
	a := ts.request(t, "POST", "/v1/"+kind+"s", fmt.Sprintf(`{"email":%q,"password":"correct horse","name":"Test"}`, email))
	if a.StatusCode != 201 {
		t.Fatalf("register %s: %d %s", email, a.StatusCode, a.raw)
	}
}

func loginBody(email, password string) string {
	return fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)
}

func login(t *testing.T, ts *testServer, email string) string {
	t.Helper()
	a := ts.request(t, "POST", "/v1/login", loginBody(email, "correct horse"))
	if a.StatusCode != 200 {
		t.Fatalf("login %s: %d %s", email, a.StatusCode, a.raw)
	}
	return as[apiclient.Session](t, a).Token
}

func TestAccountsAndSessions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	t.Run("an email is normalized and taken once", func(t *testing.T) {
		a := ts.request(t, "POST", "/v1/buyers", `{"email":" Ada@Example.com","password":"correct horse","name":"Ada"}`)
		if acct := as[accountJSON](t, a); a.StatusCode != 201 || acct.Email != "ada@example.com" || acct.ID == "" || acct.Name != "Ada" {
			t.Fatalf("POST /v1/buyers = %d %s", a.StatusCode, a.raw)
		}
		a = ts.request(t, "POST", "/v1/organizers", `{"email":"ADA@example.com","password":"another one","name":"Ada Org"}`)
		if a.StatusCode != 409 || !a.problem(t).is("email-taken") {
			t.Errorf("taken email = %d %s", a.StatusCode, a.raw)
		}
	})
	register(t, ts, "organizer", "org@example.com")

	a := ts.request(t, "POST", "/v1/login", loginBody("ada@EXAMPLE.com", "correct horse"))
	session := as[apiclient.Session](t, a)
	t.Run("a login opens a session", func(t *testing.T) {
		if a.StatusCode != 200 || session.TokenType != "Bearer" || session.ExpiresAt.IsZero() ||
			session.Principal.Kind != "buyer" || session.Principal.Email != "ada@example.com" {
			t.Fatalf("login = %d %s", a.StatusCode, a.raw)
		}
	})
	t.Run("the session names its principal; anything else is 401", func(t *testing.T) {
		a := ts.request(t, "GET", "/v1/me", "", "Authorization", "Bearer "+session.Token)
		if me := as[apiclient.Principal](t, a); a.StatusCode != 200 || me.Kind != "buyer" || me.Id != session.Principal.Id {
			t.Errorf("GET /v1/me = %d %s", a.StatusCode, a.raw)
		}
		for _, header := range []string{"", "Bearer", "Bearer nonsense", "Basic " + session.Token} {
			if a := ts.request(t, "GET", "/v1/me", "", "Authorization", header); a.StatusCode != 401 || !a.problem(t).is("unauthorized") {
				t.Errorf("GET /v1/me with %q = %d %s", header, a.StatusCode, a.raw)
			}
		}
	})
	t.Run("a wrong password and an unknown email are the same answer", func(t *testing.T) {
		for _, tt := range []struct{ email, password string }{
			{"ada@example.com", "wrong password"},
			{"nobody@example.com", "correct horse"},
		} {
			if a := ts.request(t, "POST", "/v1/login", loginBody(tt.email, tt.password)); a.StatusCode != 401 || !a.problem(t).is("invalid-credentials") {
				t.Errorf("login %s/%s = %d %s", tt.email, tt.password, a.StatusCode, a.raw)
			}
		}
	})
}

// twoInstances starts two instances of one deployment, on a database of the
// test's own.
func twoInstances(t *testing.T) (one, two *testServer) {
	t.Helper()
	db := testenv.Postgres(t)
	return startInstance(t, instance{db: db}), startInstance(t, instance{db: db})
}

// TestLogoutIsSeenByAnotherInstanceAtOnce: two instances on one database; the
// second trusts the session from its cache, and forgets it as soon as the
// logout's notification arrives (well within a second, the cache's bound).
func TestLogoutIsSeenByAnotherInstanceAtOnce(t *testing.T) {
	t.Parallel()
	one, two := twoInstances(t)
	register(t, one, "buyer", "b@example.com")
	token := login(t, one, "b@example.com")
	if a := two.request(t, "GET", "/v1/me", "", "Authorization", "Bearer "+token); a.StatusCode != 200 {
		t.Fatalf("the second instance does not know the session: %d", a.StatusCode)
	}
	if a := one.request(t, "POST", "/v1/logout", "", "Authorization", "Bearer "+token); a.StatusCode != 204 {
		t.Fatalf("logout = %d", a.StatusCode)
	}
	refusedSoon(t, "the second instance refusing the session after the logout", func() answer {
		return two.request(t, "GET", "/v1/me", "", "Authorization", "Bearer "+token)
	})
}

// TestCookieLogoutEndsTheSessionEverywhere: POST /v1/logout called with the
// browser's session cookie (no bearer token) ends that session, on this
// instance at once and on another as soon as the notification arrives, and
// clears the cookie.
func TestCookieLogoutEndsTheSessionEverywhere(t *testing.T) {
	t.Parallel()
	one, two := twoInstances(t)
	register(t, one, "buyer", "cookie@example.com")
	b := newBrowser(t, one)
	if a := b.do(t, "POST", "/v1/web/session", loginBody("cookie@example.com", "correct horse")); a.StatusCode != 200 {
		t.Fatalf("web login = %d %s", a.StatusCode, a.raw)
	}
	var cookie string
	for _, c := range b.client.Jar.Cookies(mustURL(t, one.http.URL)) {
		if c.Name == "sd_session" {
			cookie = "sd_session=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatal("no session cookie after the web login")
	}
	if a := two.request(t, "GET", "/v1/me", "", "Cookie", cookie); a.StatusCode != 200 {
		t.Fatalf("the second instance does not know the cookie's session: %d %s", a.StatusCode, a.raw)
	}
	a := b.do(t, "POST", "/v1/logout", "")
	if a.StatusCode != 204 {
		t.Fatalf("logout with the cookie = %d %s", a.StatusCode, a.raw)
	}
	cleared := false
	for _, c := range a.Cookies() {
		cleared = cleared || (c.Name == "sd_session" && c.MaxAge < 0)
	}
	if !cleared {
		t.Errorf("the logout's answer does not clear the session cookie: %q", a.Header.Values("Set-Cookie"))
	}
	if a := one.request(t, "GET", "/v1/me", "", "Cookie", cookie); a.StatusCode != 401 {
		t.Errorf("the cookie on the instance that logged out = %d, want 401 at once", a.StatusCode)
	}
	refusedSoon(t, "the second instance refusing the cookie's session after the logout", func() answer {
		return two.request(t, "GET", "/v1/me", "", "Cookie", cookie)
	})
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestEleventhLoginFromOneAddress: refused with Retry-After: 6 (less the time
// the ten took), and no bcrypt
// hash ran for it.
func TestEleventhLoginFromOneAddress(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	register(t, ts, "buyer", "b@example.com")
	first := time.Now()
	for i := 1; i <= 10; i++ {
		if a := ts.request(t, "POST", "/v1/login", loginBody("b@example.com", "wrong password")); a.StatusCode != 401 {
			t.Fatalf("attempt %d = %d %s", i, a.StatusCode, a.raw)
		}
	}
	hashes := ts.Auth.Hashes()
	a := ts.request(t, "POST", "/v1/login", loginBody("b@example.com", "correct horse"))
	took := time.Since(first) // ten bcrypt hashes: the wait is 6 s less this
	if a.StatusCode != 429 || a.problem(t).Limit != "login-address" ||
		!wholeSecondsWithin(a.Header.Get("Retry-After"), 6*time.Second-took, 6*time.Second) {
		t.Fatalf("11th attempt, %v after the first = %d %s Retry-After %q, want 429 login-address, Retry-After: 6 s less up to that",
			took, a.StatusCode, a.raw, a.Header.Get("Retry-After"))
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
		return ts.request(t, "POST", "/v1/login", loginBody("x@example.com", "wrong password"),
			"X-Forwarded-For", forwardedFor).StatusCode
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
		if a := ts.request(t, "POST", "/v1/login", loginBody("Victim@example.com", "guess"+fmt.Sprint(i)+"xxxxx"),
			"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i)); a.StatusCode != 401 {
			t.Fatalf("attempt %d = %d", i, a.StatusCode)
		}
	}
	hashes := ts.Auth.Hashes()
	a := ts.request(t, "POST", "/v1/login", loginBody("victim@example.com", "correct horse"), "X-Forwarded-For", "198.51.100.21")
	if a.StatusCode != 429 || a.problem(t).Limit != "login-email" {
		t.Fatalf("21st = %d %s, want 429 login-email", a.StatusCode, a.raw)
	}
	if ts.Auth.Hashes() != hashes {
		t.Error("a login refused by login-email computed a hash")
	}
	if a := ts.request(t, "POST", "/v1/login", loginBody("other@example.com", "whatever12"),
		"X-Forwarded-For", "198.51.100.21"); a.StatusCode != 401 {
		t.Errorf("another email from that address = %d, want 401", a.StatusCode)
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
		if a := ts.request(t, "POST", "/v1/login", loginBody("b@example.com", "wrong password")); a.StatusCode != 401 {
			t.Fatalf("attempt %d with Redis down = %d %s", i, a.StatusCode, a.raw)
		}
	}
	a := ts.request(t, "POST", "/v1/login", loginBody("b@example.com", "correct horse"))
	if a.StatusCode != 429 || a.problem(t).Limit != "login-address" {
		t.Fatalf("11th with Redis down = %d %s, want 429 login-address", a.StatusCode, a.raw)
	}
	metric := metricValue(t, ts, `stagedoor_ratelimit_decisions_total{decision="fallback_denied",limit="login-address"}`)
	if metric != "1" {
		t.Errorf("fallback_denied counted %q, want 1", metric)
	}
}

// metricValue reads one sample from the server's /metrics page (on the
// metrics listener).
func metricValue(t *testing.T, ts *testServer, series string) string {
	t.Helper()
	for _, line := range strings.Split(metricsText(t, ts), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimPrefix(line, series+" ")
		}
	}
	return ""
}

// metricsText is the server's whole /metrics page, from the metrics listener.
func metricsText(t testing.TB, ts *testServer) string {
	t.Helper()
	resp, err := http.Get(ts.metrics.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, text)
	}
	return string(text)
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
			a := ts.request(t, "POST", tt.path, tt.body)
			if p := a.problem(t); a.StatusCode != 400 || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.says) {
				t.Errorf("= %d %s, want 400 invalid-request saying %q", a.StatusCode, a.raw, tt.says)
			}
		})
	}
	var accounts int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM accounts`).Scan(&accounts); err != nil || accounts != 0 {
		t.Errorf("%d accounts stored after bad input (%v), want 0", accounts, err)
	}
}
