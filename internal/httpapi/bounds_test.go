package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// TestContractBoundsAreEnforced: a bound docs/openapi.yaml states is one the
// server keeps. At the bound the request is taken; one past it is a 400 that
// names the field (every exchange also passes the contract check, so the
// document must allow the first and forbid the second).
func TestContractBoundsAreEnforced(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	key := v.key(t, v.event)

	// refused checks that a is a 400 invalid-request whose detail names field.
	refused := func(t *testing.T, a answer, field string) {
		t.Helper()
		if a.StatusCode != 400 || !a.problem(t).is("invalid-request") || !strings.Contains(a.problem(t).Detail, field) {
			t.Errorf("past the bound of %s: %d %.300s; want 400 invalid-request naming %s", field, a.StatusCode, a.raw, field)
		}
	}

	t.Run("a login's password: 72 bytes, as a signup's", func(t *testing.T) {
		email, password := fmt.Sprintf("long-%s@example.com", ids.New()), strings.Repeat("p", auth.MaxPasswordBytes)
		if a := v.request(t, "POST", "/v1/buyers", fmt.Sprintf(`{"email":%q,"password":%q,"name":"Long"}`, email, password)); a.StatusCode != 201 {
			t.Fatalf("signup with a 72-byte password = %d %s", a.StatusCode, a.raw)
		}
		if a := v.request(t, "POST", "/v1/login", loginBody(email, password)); a.StatusCode != 200 {
			t.Errorf("login with the 72-byte password = %d %s", a.StatusCode, a.raw)
		}
		refused(t, v.request(t, "POST", "/v1/login", loginBody(email, password+"x")), "password")
		refused(t, v.request(t, "POST", "/v1/web/session", loginBody(email, password+"x")), "password")
	})

	t.Run("a login's device_token: 100 bytes", func(t *testing.T) {
		email := fmt.Sprintf("device-%s@example.com", ids.New())
		register(t, v.testServer, "buyer", email)
		with := func(token string) answer {
			return v.request(t, "POST", "/v1/login", fmt.Sprintf(`{"email":%q,"password":"correct horse","device_token":%q}`, email, token))
		}
		if a := with(strings.Repeat("d", 100)); a.StatusCode != 200 { // no device's: counts as none
			t.Errorf("login with a 100-byte device_token = %d %s", a.StatusCode, a.raw)
		}
		refused(t, with(strings.Repeat("d", 100+1)), "device_token")
	})

	t.Run("an event's sections: 50", func(t *testing.T) {
		event := func(n int) string {
			sections := make([]string, n)
			for i := range sections {
				sections[i] = fmt.Sprintf(`{"name":"Box %d","rows":1,"seats_per_row":1,"price_cents":100}`, i)
			}
			return fmt.Sprintf(`{"name":"Boxes","venue":"Hall","starts_at":%q,"sections":[%s]}`,
				time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339), strings.Join(sections, ","))
		}
		if a := v.request(t, "POST", "/v1/events", event(50), v.org.bearer()...); a.StatusCode != 201 {
			t.Errorf("an event of 50 sections = %d %.300s", a.StatusCode, a.raw)
		}
		refused(t, v.request(t, "POST", "/v1/events", event(51), v.org.bearer()...), "sections")
	})

	t.Run("a time: 35 characters", func(t *testing.T) {
		event := func(startsAt string) string {
			return fmt.Sprintf(`{"name":"Late","venue":"Hall","starts_at":%q,"sections":[{"name":"A","rows":1,"seats_per_row":1,"price_cents":1}]}`, startsAt)
		}
		at := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04:05")
		if a := v.request(t, "POST", "/v1/events", event(at+".123456789+00:00"), v.org.bearer()...); a.StatusCode != 201 {
			t.Errorf("starts_at of 35 characters = %d %s", a.StatusCode, a.raw)
		}
		refused(t, v.request(t, "POST", "/v1/events", event(at+".1234567890+00:00"), v.org.bearer()...), "starts_at")

		scanned := func(at string) string {
			return fmt.Sprintf(`{"device_scan_id":%q,"code":"NOSUCHCODE","scanned_at":%q}`, ids.New(), at)
		}
		now := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05")
		if a := v.request(t, "POST", "/v1/scans/batch", uploadBody(scanned(now+".123456789+00:00")), "X-Api-Key", key); a.StatusCode != 200 {
			t.Errorf("scanned_at of 35 characters = %d %s", a.StatusCode, a.raw)
		}
		refused(t, v.request(t, "POST", "/v1/scans/batch", uploadBody(scanned(now+".1234567890+00:00")), "X-Api-Key", key), "scanned_at")
	})

	t.Run("a scanned code: 256 bytes, space included", func(t *testing.T) {
		code := strings.Repeat("A", 256)
		if a := v.request(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key); a.StatusCode != 404 || a.problem(t).Result != "invalid" {
			t.Errorf("a 256-byte code = %d %s; want 404 scan-rejected invalid", a.StatusCode, a.raw)
		}
		refused(t, v.request(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, "A"+strings.Repeat(" ", 256)), "X-Api-Key", key), "code")

		upload := func(code string) answer {
			return v.request(t, "POST", "/v1/scans/batch",
				uploadBody(deviceScan(ids.New(), code, time.Now().Add(-time.Minute), false)), "X-Api-Key", key)
		}
		if a := upload(code); a.StatusCode != 200 || !strings.Contains(string(a.raw), `"result":"invalid"`) {
			t.Errorf("an upload of a 256-byte code = %d %s; want 200, invalid", a.StatusCode, a.raw)
		}
		refused(t, upload(code+"A"), "scans[0].code")
	})

	t.Run("a problem's detail: 1,000 characters", func(t *testing.T) {
		a := v.request(t, "POST", "/v1/login", fmt.Sprintf(`{%q:1}`, strings.Repeat("é", 5000)))
		p := a.problem(t)
		if n := utf8.RuneCountInString(p.Detail); a.StatusCode != 400 || n > 1000 || !strings.HasSuffix(p.Detail, "…") {
			t.Errorf("an unknown field of 5,000 characters = %d, a detail of %d characters ending %q", a.StatusCode, n, p.Detail[max(0, len(p.Detail)-10):])
		}
	})

	t.Run("any operation refuses a body over 64 KiB with 400", func(t *testing.T) {
		big := strings.Repeat("x", 64<<10+1)
		for _, path := range []string{"/healthz", "/readyz", "/v1/events", "/v1/events/" + v.event + "/seats", "/openapi.yaml"} {
			if a := v.request(t, "GET", path, big); a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
				t.Errorf("GET %s with a 64 KiB + 1 body = %d %.200s", path, a.StatusCode, a.raw)
			}
		}
	})
}
