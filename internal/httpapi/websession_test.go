package httpapi_test

import (
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// browser is an HTTP client with a cookie jar, sending Origin as a browser's
// fetch does.
type browser struct {
	ts     *testServer
	client *http.Client
	origin string
}

func newBrowser(t *testing.T, ts *testServer) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{ts: ts, client: &http.Client{Jar: jar}, origin: ts.http.URL}
}

func (b *browser) do(t *testing.T, method, path, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, b.ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method != "GET" {
		req.Header.Set("Origin", b.origin)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, raw := apitest.Send(t, b.client, req)
	return answer{Response: resp, raw: raw}
}

// TestBrowserSessionsAreCookiesTheScriptsCannotRead: a login through POST
// /v1/web/session answers no token; its cookies are HttpOnly and SameSite=Strict,
// and with them the browser is the buyer on every route; logging out ends the
// session everywhere.
func TestBrowserSessionsAreCookiesTheScriptsCannotRead(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	register(t, ts, "buyer", "web@example.com")
	b := newBrowser(t, ts)
	a := b.do(t, "POST", "/v1/web/session", loginBody("web@example.com", "correct horse"))
	if a.StatusCode != 200 || strings.Contains(string(a.raw), "token") {
		t.Fatalf("web login = %d %s, want 200 without a token in the body", a.StatusCode, a.raw)
	}
	cookies := map[string]*http.Cookie{}
	for _, c := range a.Cookies() {
		cookies[c.Name] = c
	}
	for _, name := range []string{"sd_session", "sd_device"} {
		c := cookies[name]
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value == "" {
			t.Errorf("cookie %s = %+v, want HttpOnly, SameSite=Strict", name, c)
		}
	}
	if me := b.do(t, "GET", "/v1/me", ""); me.StatusCode != 200 || as[apiclient.Principal](t, me).Email != "web@example.com" {
		t.Errorf("GET /v1/me with the cookie = %d %s", me.StatusCode, me.raw)
	}
	if a := b.do(t, "DELETE", "/v1/web/session", ""); a.StatusCode != 204 {
		t.Fatalf("web logout = %d %s", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", "/v1/me", "", "Cookie", "sd_session="+cookies["sd_session"].Value); a.StatusCode != 401 {
		t.Errorf("the old cookie after logout = %d, want 401", a.StatusCode)
	}
}

// TestCrossSiteWritesAreRefused: with a logged-in browser's cookie, a write
// whose Origin is another site, or that says nothing of where it comes from,
// is 403 and changes nothing; the same write from this site goes through. A
// login or signup forged by another site is refused too. Reads and API clients
// (bearer tokens, no Origin) are unaffected.
func TestCrossSiteWritesAreRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	event, seats := newEvent(t, ts, org, eventBody(1, 3))
	register(t, ts, "buyer", "victim@example.com")
	b := newBrowser(t, ts)
	if a := b.do(t, "POST", "/v1/web/session", loginBody("victim@example.com", "correct horse")); a.StatusCode != 200 {
		t.Fatalf("web login = %d %s", a.StatusCode, a.raw)
	}

	b.origin = "https://evil.example"
	if a := b.do(t, "POST", "/v1/holds", holdBody(event, seats[0])); a.StatusCode != 403 || !a.problem(t).is("forbidden") {
		t.Errorf("a hold from another site = %d %s, want 403", a.StatusCode, a.raw)
	}
	if a := b.do(t, "POST", "/v1/buyers", `{"email":"forged@example.com","password":"correct horse","name":"F"}`); a.StatusCode != 403 {
		t.Errorf("a signup from another site = %d, want 403", a.StatusCode)
	}
	b.origin = "" // no Origin, no Sec-Fetch-Site: no telling where it comes from
	if a := b.do(t, "POST", "/v1/holds", holdBody(event, seats[0])); a.StatusCode != 403 {
		t.Errorf("a cookie write without Origin = %d %s, want 403", a.StatusCode, a.raw)
	}
	if n := heldSeats(t, ts, event); n != 0 {
		t.Errorf("%d seats held after refused writes", n)
	}
	if a := b.do(t, "GET", "/v1/me", ""); a.StatusCode != 200 {
		t.Errorf("a read with the cookie and no Origin = %d, want 200", a.StatusCode)
	}

	b.origin = ts.http.URL
	if a := b.do(t, "POST", "/v1/holds", holdBody(event, seats[0])); a.StatusCode != 201 {
		t.Errorf("a hold from this site = %d %s, want 201", a.StatusCode, a.raw)
	}
	buyer := newAccount(t, ts, auth.Buyer)
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), buyer.bearer()...); a.StatusCode != 201 {
		t.Errorf("an API client's hold (bearer, no Origin) = %d %s, want 201", a.StatusCode, a.raw)
	}
}

// TestPagesAreServedWithAStrictPolicy: the front end's page and the API
// reference come with a Content-Security-Policy that allows no inline script,
// and the usual headers.
func TestPagesAreServedWithAStrictPolicy(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	for _, path := range []string{"/", "/docs/", "/v1/events"} {
		a := ts.request(t, "GET", path, "")
		csp := a.Header.Get("Content-Security-Policy")
		if a.StatusCode != 200 || !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s = %d, Content-Security-Policy %q", path, a.StatusCode, csp)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if got := a.Header.Get(h); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, h, got, want)
			}
		}
		if strings.Contains(string(a.raw), "<script>") || strings.Contains(string(a.raw), " onclick=") {
			t.Errorf("GET %s holds an inline script", path)
		}
	}
	if a := ts.request(t, "GET", "/ui/no-such-file.js", ""); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("GET /ui/no-such-file.js = %d %s", a.StatusCode, a.raw)
	}
}

// TestABrowserAsksWhoItIsWithoutAnError: GET /v1/web/session answers 200
// before a login ({"authenticated": false}), the buyer with the cookie, and
// 200 false again once the session ended elsewhere, clearing its cookie; a
// bearer token is not the browser's session.
func TestABrowserAsksWhoItIsWithoutAnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	register(t, ts, "buyer", "who@example.com")
	b := newBrowser(t, ts)
	state := func(a answer) apiclient.WebSessionState {
		t.Helper()
		if a.StatusCode != 200 || a.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET /v1/web/session = %d (Cache-Control %q) %s, want 200 no-store", a.StatusCode, a.Header.Get("Cache-Control"), a.raw)
		}
		return as[apiclient.WebSessionState](t, a)
	}
	if s := state(b.do(t, "GET", "/v1/web/session", "")); s.Authenticated || s.Principal != nil {
		t.Errorf("before a login: %+v, want not authenticated", s)
	}
	login := b.do(t, "POST", "/v1/web/session", loginBody("who@example.com", "correct horse"))
	if login.StatusCode != 200 {
		t.Fatalf("web login = %d %s", login.StatusCode, login.raw)
	}
	s := state(b.do(t, "GET", "/v1/web/session", ""))
	if !s.Authenticated || s.Principal == nil || string(s.Principal.Email) != "who@example.com" || s.Principal.Kind != "buyer" {
		t.Errorf("logged in: %+v, want the buyer", s)
	}
	var cookie string
	for _, c := range login.Cookies() {
		if c.Name == "sd_session" {
			cookie = c.Value
		}
	}
	// The session ends through the API (POST /v1/logout with the cookie).
	if a := ts.request(t, "POST", "/v1/logout", "", "Cookie", "sd_session="+cookie, "Origin", ts.http.URL); a.StatusCode != 204 {
		t.Fatalf("logout = %d %s", a.StatusCode, a.raw)
	}
	ended := ts.request(t, "GET", "/v1/web/session", "", "Cookie", "sd_session="+cookie)
	if s := state(ended); s.Authenticated {
		t.Errorf("after the session ended: %+v, want not authenticated", s)
	}
	if c := ended.Cookies(); len(c) != 1 || c[0].Name != "sd_session" || c[0].MaxAge >= 0 {
		t.Errorf("after the session ended, cookies %v, want sd_session cleared", c)
	}
	buyer := newAccount(t, ts, auth.Buyer)
	if s := state(ts.request(t, "GET", "/v1/web/session", "", buyer.bearer()...)); s.Authenticated {
		t.Errorf("with a bearer token: %+v, want not authenticated (the cookie alone counts)", s)
	}
}
