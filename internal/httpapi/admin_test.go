package httpapi_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

const adminToken = "admin-token-for-tests-0123456789"

// limits answers GET /v1/admin/limits with the admin token.
func (ts *testServer) limits(t *testing.T) []limitJSON {
	t.Helper()
	a := ts.request(t, "GET", "/v1/admin/limits", "", "Authorization", "Bearer "+adminToken)
	if a.StatusCode != 200 {
		t.Fatalf("GET /v1/admin/limits = %d %s", a.StatusCode, a.raw)
	}
	return as[[]limitJSON](t, a)
}

// putLimit sends PUT /v1/admin/limits/{name} with the admin token and wants 200.
func (ts *testServer) putLimit(t *testing.T, name, body string) limitJSON {
	t.Helper()
	a := ts.request(t, "PUT", "/v1/admin/limits/"+name, body, "Authorization", "Bearer "+adminToken)
	if a.StatusCode != 200 {
		t.Fatalf("PUT %s %s = %d %s", name, body, a.StatusCode, a.raw)
	}
	return as[limitJSON](t, a)
}

// eventually polls cond for up to 2 s, the propagation the contract promises.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 2*time.Second, cond, what)
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
	attempt := func(ts *testServer, addr string) answer {
		return ts.request(t, "POST", "/v1/login", loginBody(fmt.Sprintf("u%d@example.com", n.Add(1)), "wrong password"),
			"X-Forwarded-For", addr)
	}
	status := func(ts *testServer, addr string) int { return attempt(ts, addr).StatusCode }
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
	if got.Mode != "off" || got.Rate != 3 || got.PeriodMS != 3600000 || got.Burst != 3 {
		t.Errorf("PUT off answered %+v", got)
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
		a := attempt(two, addr)
		return a.StatusCode == 429 && a.problem(t).Limit == "login-address"
	})

	// A new rate on two (burst kept unless given): 1/1h on both instances.
	got = two.putLimit(t, "login-address", `{"mode":"enforce","rate":1,"burst":1}`)
	if got.Rate != 1 || got.Burst != 1 || got.PeriodMS != 3600000 || got.UpdatedBy == "" {
		t.Errorf("PUT rate answered %+v", got)
	}
	var addrs atomic.Int64
	oneAllowed := func(ts *testServer) func() bool {
		return func() bool {
			k := addrs.Add(1)
			fresh := fmt.Sprintf("10.0.%d.%d", k/250, k%250+1)
			first := attempt(ts, fresh)
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
	if l := three.limits(t); l[0].Name != "login-address" || l[0].Rate != 1 || l[0].Burst != 1 {
		t.Errorf("restarted instance lists %+v", l[0])
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
		a := off.request(t, r.method, r.path, `{"mode":"off"}`, "Authorization", "Bearer "+adminToken)
		if a.StatusCode != 404 || !a.problem(t).is("not-found") {
			t.Errorf("no token configured: %s %s = %d %s, want 404", r.method, r.path, a.StatusCode, a.raw)
		}
	}

	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	for _, header := range []string{"", "Bearer", "Bearer wrong-token-of-some-length", "Bearer " + adminToken + "x",
		"Bearer " + adminToken[:len(adminToken)-1], "Basic " + adminToken} {
		for _, r := range []struct{ method, path string }{{"GET", "/v1/admin/limits"}, {"PUT", "/v1/admin/limits/login-address"}} {
			a := ts.request(t, r.method, r.path, `{"mode":"off"}`, "Authorization", header)
			if a.StatusCode != 401 || !a.problem(t).is("unauthorized") {
				t.Errorf("%s %s with %q = %d %s, want 401", r.method, r.path, header, a.StatusCode, a.raw)
			}
		}
	}
	var names []string
	for _, l := range ts.limits(t) {
		names = append(names, l.Name)
		wantMode := "enforce"
		switch l.Name {
		case "fleet-usage":
			wantMode = "off" // no STAGEDOOR_FLEET_CAPACITY
		case "worker-utilization":
			wantMode = "shadow" // the test servers' (startInstance)
		}
		if l.Mode != wantMode || l.UpdatedBy != "environment" {
			t.Errorf("limit at start: %+v", l)
		}
	}
	want := contractLimitNames(t)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("GET /v1/admin/limits lists %v, want the contract's order %v", names, want)
	}
	if s, _ := ts.Limiter.Setting("login-address"); s.Mode != ratelimit.Enforce {
		t.Errorf("a refused PUT changed the mode to %s", s.Mode)
	}
}

// contractLimitNames is the contract's LimitName enum, in its order: the
// protections the admin API lists (a new limit is named there once, not here).
func contractLimitNames(t *testing.T) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range doc.Components.Schemas["LimitName"].Value.Enum {
		names = append(names, v.(string))
	}
	return names
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
		a := ts.request(t, "PUT", "/v1/admin/limits/login-address", tt.body, "Authorization", "Bearer "+adminToken)
		if p := a.problem(t); a.StatusCode != 400 || !p.is("invalid-request") || !strings.Contains(p.Detail, tt.detail) {
			t.Errorf("PUT %s = %d %s, want 400 saying %q", tt.body, a.StatusCode, a.raw, tt.detail)
		}
	}
	a := ts.request(t, "PUT", "/v1/admin/limits/login-everything", `{"mode":"off"}`, "Authorization", "Bearer "+adminToken)
	if a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("PUT an unknown limit = %d %s, want 404", a.StatusCode, a.raw)
	}
	if after := ts.limits(t); !reflect.DeepEqual(before, after) {
		t.Errorf("refused PUTs changed the settings:\nbefore %v\nafter  %v", before, after)
	}
	if s, _ := ts.Limiter.Setting("login-address"); s.String() != "10/1m enforce" {
		t.Errorf("refused PUTs changed login-address in force to %s", s)
	}
}
