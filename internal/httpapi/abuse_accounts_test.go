package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// behindProxy trusts the loopback as a proxy, so that a test speaks for many
// client addresses through X-Forwarded-For.
var behindProxy = map[string]string{"STAGEDOOR_TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"}

func withEnv(base map[string]string, kv ...string) map[string]string {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

// TestSixthSignupFromOneAddress reproduces the fourth finding: signups were
// unlimited, each costing a bcrypt hash. Now the sixth in an hour from one
// address is refused by signup-address before any hash; buyers and organizers
// share the bucket, and another address is not affected.
func TestSixthSignupFromOneAddress(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withEnv(behindProxy, "STAGEDOOR_LIMIT_SIGNUP_ADDRESS", "5/1h burst 5"), nil, nil)
	signup := func(kind, email, addr string) answer {
		return ts.request(t, "POST", "/v1/"+kind, fmt.Sprintf(`{"email":%q,"password":"correct horse","name":"N"}`, email),
			"X-Forwarded-For", addr)
	}
	for i := range 5 {
		kind := []string{"buyers", "organizers"}[i%2]
		if a := signup(kind, fmt.Sprintf("u%d@example.com", i), "198.51.100.7"); a.StatusCode != 201 {
			t.Fatalf("signup %d = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	hashes := ts.Auth.Hashes()
	a := signup("buyers", "sixth@example.com", "198.51.100.7")
	if p := a.problem(t); a.StatusCode != 429 || p.Limit != "signup-address" || a.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth signup = %d %s, want 429 signup-address with Retry-After", a.StatusCode, a.raw)
	}
	if got := ts.Auth.Hashes() - hashes; got != 0 {
		t.Errorf("the refused signup computed %d hashes, want 0", got)
	}
	if _, err := ts.Auth.AccountByEmail(context.Background(), "sixth@example.com"); err == nil {
		t.Error("the refused signup made an account")
	}
	if a := signup("buyers", "elsewhere@example.com", "203.0.113.9"); a.StatusCode != 201 {
		t.Errorf("a signup from another address = %d %s, want 201", a.StatusCode, a.raw)
	}
}

// TestOwnerLogsInFromKnownDeviceDuringGuessingAttack reproduces the fifth
// finding: twenty wrong passwords from twenty addresses exhausted login-email
// and locked the owner out. Now the attacker is refused, and so is the owner on
// a new device, but the owner's device of an earlier login is let in, limited
// by login-device only. A forged or borrowed device token buys the attacker
// nothing.
func TestOwnerLogsInFromKnownDeviceDuringGuessingAttack(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withEnv(behindProxy, "STAGEDOOR_LIMIT_LOGIN_DEVICE", "3/1h"), nil, nil)
	register(t, ts, "buyer", "owner@example.com")
	register(t, ts, "buyer", "mallory@example.com")
	first := ts.request(t, "POST", "/v1/login", loginBody("owner@example.com", "correct horse"), "X-Forwarded-For", "192.0.2.1")
	device := as[apiclient.Session](t, first).DeviceToken
	if first.StatusCode != 200 || !strings.HasPrefix(device, "dev_") {
		t.Fatalf("first login = %d %s, want 200 with a device token", first.StatusCode, first.raw)
	}
	malloryDevice := as[apiclient.Session](t, ts.request(t, "POST", "/v1/login", loginBody("mallory@example.com", "correct horse"),
		"X-Forwarded-For", "198.51.100.200")).DeviceToken

	withDevice := func(email, password, token, addr string) answer {
		return ts.request(t, "POST", "/v1/login",
			fmt.Sprintf(`{"email":%q,"password":%q,"device_token":%q}`, email, password, token), "X-Forwarded-For", addr)
	}
	refused := 0
	for i := range 20 { // the guessing attack, from twenty addresses
		if st := withDevice("owner@example.com", fmt.Sprintf("guess-%d-xxxx", i), "", fmt.Sprintf("198.51.100.%d", i)).StatusCode; st == 429 {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("twenty guesses at one email were all answered: login-email did not hold")
	}
	for name, token := range map[string]string{
		"no device token":          "",
		"a forged device token":    "dev_" + strings.Repeat("A", 43),
		"another account's device": malloryDevice,
	} {
		if a := withDevice("owner@example.com", "correct horse", token, "198.51.100.99"); a.StatusCode != 429 || a.problem(t).Limit != "login-email" {
			t.Errorf("during the attack, %s: %d %s, want 429 login-email", name, a.StatusCode, a.raw)
		}
	}

	hashes := ts.Auth.Hashes()
	a := withDevice("owner@example.com", "correct horse", device, "192.0.2.1")
	if a.StatusCode != 200 || as[apiclient.Session](t, a).DeviceToken != device {
		t.Fatalf("the owner from a known device during the attack = %d %s, want 200 and the same device", a.StatusCode, a.raw)
	}
	if a.Header.Get("RateLimit-Policy") != `"login-device";q=3;w=3600` {
		t.Errorf("RateLimit-Policy = %q, want login-device's", a.Header.Get("RateLimit-Policy"))
	}
	if got := ts.Auth.Hashes() - hashes; got != 1 {
		t.Errorf("%d hashes for one login, want 1", got)
	}

	// login-device bounds guessing with a stolen device token too.
	withDevice("owner@example.com", "wrong password", device, "192.0.2.1")
	withDevice("owner@example.com", "wrong password", device, "192.0.2.1")
	if a := withDevice("owner@example.com", "correct horse", device, "192.0.2.1"); a.StatusCode != 429 || a.problem(t).Limit != "login-device" {
		t.Errorf("the fourth login of 3/1h from one device = %d %s, want 429 login-device", a.StatusCode, a.raw)
	}
}

// TestEventCreationIsLimitedPerOrganizer: event-create refuses an organizer's
// events past its limit, before anything is written, and leaves other
// organizers alone.
func TestEventCreationIsLimitedPerOrganizer(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_LIMIT_EVENT_CREATE": "2/1h"}, nil, nil)
	busy, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Organizer)
	newEvent(t, ts, busy, eventBody(1, 1))
	newEvent(t, ts, busy, eventBody(1, 1))
	a := ts.request(t, "POST", "/v1/events", eventBody(1, 1), busy.bearer()...)
	if a.StatusCode != 429 || a.problem(t).Limit != "event-create" {
		t.Fatalf("third event of 2/1h = %d %s, want 429 event-create", a.StatusCode, a.raw)
	}
	var events int
	if err := ts.DB.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE organizer_id = $1`, busy.id).Scan(&events); err != nil || events != 2 {
		t.Errorf("%d events stored (%v), want 2", events, err)
	}
	newEvent(t, ts, other, eventBody(1, 1))
}

// TestARefusedLoginSpendsNoToken: login-address and login-email are one
// decision: a login refused by login-email spends none of login-address.
func TestARefusedLoginSpendsNoToken(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withEnv(behindProxy, "STAGEDOOR_LIMIT_LOGIN_ADDRESS", "3/1h", "STAGEDOOR_LIMIT_LOGIN_EMAIL", "1/1h"), nil, nil)
	login := func(email string) answer {
		return ts.request(t, "POST", "/v1/login", loginBody(email, "wrong password"), "X-Forwarded-For", "198.51.100.77")
	}
	if a := login("first@example.com"); a.StatusCode != 401 {
		t.Fatalf("first login = %d", a.StatusCode)
	}
	for range 3 { // refused by login-email: must cost login-address nothing
		if a := login("first@example.com"); a.StatusCode != 429 || a.problem(t).Limit != "login-email" {
			t.Fatalf("a second login of one email = %d %s, want 429 login-email", a.StatusCode, a.raw)
		}
	}
	for _, email := range []string{"second@example.com", "third@example.com"} {
		if a := login(email); a.StatusCode != 401 {
			t.Errorf("login of %s = %d %s, want 401: the refusals spent login-address tokens", email, a.StatusCode, a.raw)
		}
	}
	if a := login("fourth@example.com"); a.StatusCode != 429 || a.problem(t).Limit != "login-address" {
		t.Errorf("the fourth login of 3/1h from the address = %d %s, want 429 login-address", a.StatusCode, a.raw)
	}
}
