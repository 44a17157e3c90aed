package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/limitadmin"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

const adminToken = "admin-token-for-tests-0123456789"

// runLimitSettings starts the limit settings of one test instance as serve does:
// stored settings applied before serving, kept in step until the test ends. A
// database that does not answer (a test of readiness) is only logged.
func runLimitSettings(t testing.TB, cfg config.Config, db *pgxpool.Pool, limiter *ratelimit.Limiter,
	registry prometheus.Registerer) *limitadmin.Service {
	t.Helper()
	svc := limitadmin.New(db, limiter, limitadmin.Options{
		Registerer: registry,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := svc.Start(context.Background(), cfg.LimitDefinitions()); err != nil {
		t.Logf("limit settings not started: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return svc
}

// limits answers GET /v1/admin/limits with the admin token.
func (ts *testServer) limits(t *testing.T) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.http.URL+"/v1/admin/limits", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/admin/limits = %d, %v", resp.StatusCode, err)
	}
	return out
}

// putLimit sends PUT /v1/admin/limits/{name} with the admin token and wants 200.
func (ts *testServer) putLimit(t *testing.T, name, body string) map[string]any {
	t.Helper()
	resp, got := ts.do(t, "PUT", "/v1/admin/limits/"+name, body, "Authorization", "Bearer "+adminToken)
	if resp.StatusCode != 200 {
		t.Fatalf("PUT %s %s = %d %v", name, body, resp.StatusCode, got)
	}
	return got
}

// eventually polls cond for up to 2 s, the propagation API.md promises.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 2 s: %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestLimitSettingsReachEveryInstance: two instances of one deployment; what an
// admin sets on either is in force on both within 2 s, and survives a restart.
func TestLimitSettingsReachEveryInstance(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	in := instance{db: testenv.Postgres(t), rdb: rdb, redisPrefix: prefix, env: map[string]string{
		"STAGEDOOR_ADMIN_TOKEN":         adminToken,
		"STAGEDOOR_LIMIT_LOGIN_ADDRESS": "3/1h",
		"STAGEDOOR_TRUSTED_PROXIES":     "127.0.0.1/32, ::1/128",
	}}
	one, two := startInstance(t, in), startInstance(t, in)

	// A login from addr, on an email of its own so that login-email never refuses.
	var n atomic.Int64
	attempt := func(ts *testServer, addr string) (*http.Response, map[string]any) {
		return ts.do(t, "POST", "/v1/login", loginBody(fmt.Sprintf("u%d@example.com", n.Add(1)), "wrong password"),
			"X-Forwarded-For", addr)
	}
	status := func(ts *testServer, addr string) int { resp, _ := attempt(ts, addr); return resp.StatusCode }
	const addr = "198.51.100.1"
	for i := range 3 {
		if got := status(one, addr); got != 401 {
			t.Fatalf("attempt %d = %d, want 401", i+1, got)
		}
	}
	if status(one, addr) != 429 || status(two, addr) != 429 {
		t.Fatal("the 4th attempt of 3/1h is not refused on both instances")
	}

	// off on one: two stops refusing (its denial cache cleared too).
	got := one.putLimit(t, "login-address", `{"mode":"off"}`)
	if got["mode"] != "off" || got["rate"] != 3.0 || got["period_ms"] != 3600000.0 || got["burst"] != 3.0 {
		t.Errorf("PUT off answered %v", got)
	}
	eventually(t, "two allows login-address once off", func() bool { return status(two, addr) == 401 })
	const gauge = `stagedoor_ratelimit_setting{limit="login-address",mode="%s"}`
	if metricValue(t, two, fmt.Sprintf(gauge, "off")) != "1" || metricValue(t, two, fmt.Sprintf(gauge, "enforce")) != "0" {
		t.Errorf("two's gauge does not show login-address off")
	}

	// shadow on two: one allows, and counts what it would have refused.
	two.putLimit(t, "login-address", `{"mode":"shadow"}`)
	const shadowDenied = `stagedoor_ratelimit_decisions_total{decision="shadow_denied",limit="login-address"}`
	eventually(t, "one counts shadow_denied while allowing", func() bool {
		return status(one, addr) == 401 && metricValue(t, one, shadowDenied) != ""
	})
	if metricValue(t, one, fmt.Sprintf(gauge, "shadow")) != "1" {
		t.Errorf("one's gauge does not show login-address in shadow")
	}

	// enforce again on one: two refuses again.
	one.putLimit(t, "login-address", `{"mode":"enforce"}`)
	eventually(t, "two refuses once enforcing", func() bool {
		resp, body := attempt(two, addr)
		return resp.StatusCode == 429 && body["limit"] == "login-address"
	})

	// A new rate on two (burst kept unless given): 1/1h on both instances.
	got = two.putLimit(t, "login-address", `{"mode":"enforce","rate":1,"burst":1}`)
	if got["rate"] != 1.0 || got["burst"] != 1.0 || got["period_ms"] != 3600000.0 || got["updated_by"] == "" {
		t.Errorf("PUT rate answered %v", got)
	}
	var addrs atomic.Int64
	oneAllowed := func(ts *testServer) func() bool {
		return func() bool {
			k := addrs.Add(1)
			fresh := fmt.Sprintf("10.0.%d.%d", k/250, k%250+1)
			first, _ := attempt(ts, fresh)
			return first.StatusCode == 401 && first.Header.Get("RateLimit-Policy") == `"login-address";q=1;w=3600` &&
				status(ts, fresh) == 429
		}
	}
	eventually(t, "1/1h on two", oneAllowed(two))
	eventually(t, "1/1h on one", oneAllowed(one))

	// A restarted instance keeps the stored setting, not the environment's 3/1h.
	three := startInstance(t, in)
	if s, _ := three.Limiter.Setting("login-address"); s.String() != "1/1h enforce" {
		t.Errorf("restarted instance runs login-address at %s, want the stored 1/1h enforce", s)
	}
	if l := three.limits(t); l[0]["name"] != "login-address" || l[0]["rate"] != 1.0 || l[0]["burst"] != 1.0 {
		t.Errorf("restarted instance lists %v", l[0])
	}
	if !oneAllowed(three)() {
		t.Error("restarted instance does not enforce the stored 1/1h")
	}
	if metricValue(t, three, fmt.Sprintf(gauge, "enforce")) != "1" {
		t.Error("restarted instance's gauge does not show login-address enforcing")
	}
}

func TestAdminToken(t *testing.T) {
	t.Parallel()
	off := newTestServer(t, nil, nil, nil)
	for _, r := range []struct{ method, path string }{{"GET", "/v1/admin/limits"}, {"PUT", "/v1/admin/limits/login-address"}} {
		resp, body := off.do(t, r.method, r.path, `{"mode":"off"}`, "Authorization", "Bearer "+adminToken)
		if resp.StatusCode != 404 || body["type"] != "/problems/not-found" {
			t.Errorf("no token configured: %s %s = %d %v, want 404", r.method, r.path, resp.StatusCode, body)
		}
	}

	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	for _, header := range []string{"", "Bearer", "Bearer wrong-token-of-some-length", "Bearer " + adminToken + "x",
		"Bearer " + adminToken[:len(adminToken)-1], "Basic " + adminToken} {
		for _, r := range []struct{ method, path string }{{"GET", "/v1/admin/limits"}, {"PUT", "/v1/admin/limits/login-address"}} {
			resp, body := ts.do(t, r.method, r.path, `{"mode":"off"}`, "Authorization", header)
			if resp.StatusCode != 401 || body["type"] != "/problems/unauthorized" {
				t.Errorf("%s %s with %q = %d %v, want 401", r.method, r.path, header, resp.StatusCode, body)
			}
		}
	}
	var names []string
	for _, l := range ts.limits(t) {
		names = append(names, l["name"].(string))
		if l["mode"] != "enforce" || l["updated_by"] != "environment" {
			t.Errorf("limit at start: %v", l)
		}
	}
	want := []string{"login-address", "login-email", "hold-buyer", "hold-organizer", "scanner-key", "queue-join"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("GET /v1/admin/limits lists %v, want API.md's order %v", names, want)
	}
	if s, _ := ts.Limiter.Setting("login-address"); s.Mode != ratelimit.Enforce {
		t.Errorf("a refused PUT changed the mode to %s", s.Mode)
	}
}

func TestAdminPutBadBodies(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	before := ts.limits(t)
	for _, tt := range []struct{ body, detail string }{
		{`{}`, "mode is required"},
		{`{"rate":5}`, "mode is required"},
		{`{"mode":"fast"}`, `mode "fast"`},
		{`{"mode":"OFF"}`, `mode "OFF"`},
		{`{"mode":1}`, `"mode"`},
		{`{"mode":"off","rate":0}`, "rate must be"},
		{`{"mode":"off","rate":-5}`, "rate must be"},
		{`{"mode":"off","rate":"10"}`, `"rate"`},
		{`{"mode":"off","rate":1.5}`, `"rate"`},
		{`{"mode":"off","rate":1e30}`, `"rate"`},
		{`{"mode":"off","rate":2000000000}`, "rate must be"},
		{`{"mode":"off","period_ms":0}`, "period_ms must be"},
		{`{"mode":"off","period_ms":99999999999999}`, "period_ms must be"},
		{`{"mode":"off","period_ms":"1m"}`, `"period_ms"`},
		{`{"mode":"off","burst":0}`, "burst must be"},
		{`{"mode":"off","burst":true}`, `"burst"`},
		{`{"mode":"off","rate":100000,"period_ms":1}`, "rate must be at most one a microsecond"},
		{`{"mode":"off","name":"login-email"}`, `unknown field "name"`},
		{`{"mode":"off"} {}`, "exactly one JSON object"},
		{`[]`, "must be a JSON object"},
		{``, "empty"},
	} {
		resp, body := ts.do(t, "PUT", "/v1/admin/limits/login-address", tt.body, "Authorization", "Bearer "+adminToken)
		detail, _ := body["detail"].(string)
		if resp.StatusCode != 400 || body["type"] != "/problems/invalid-request" || !strings.Contains(detail, tt.detail) {
			t.Errorf("PUT %s = %d %v, want 400 saying %q", tt.body, resp.StatusCode, body, tt.detail)
		}
	}
	resp, body := ts.do(t, "PUT", "/v1/admin/limits/login-everything", `{"mode":"off"}`, "Authorization", "Bearer "+adminToken)
	if resp.StatusCode != 404 || body["type"] != "/problems/not-found" {
		t.Errorf("PUT an unknown limit = %d %v, want 404", resp.StatusCode, body)
	}
	if after := ts.limits(t); !reflect.DeepEqual(before, after) {
		t.Errorf("refused PUTs changed the settings:\nbefore %v\nafter  %v", before, after)
	}
	if s, _ := ts.Limiter.Setting("login-address"); s.String() != "10/1m enforce" {
		t.Errorf("refused PUTs changed login-address in force to %s", s)
	}
}
