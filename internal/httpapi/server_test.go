package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/httpapi"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	a := ts.request(t, "GET", "/healthz", "")
	if a.StatusCode != 200 || as[health](t, a).Status != "ok" {
		t.Fatalf("healthz = %d %s", a.StatusCode, a.raw)
	}
	a = ts.request(t, "GET", "/readyz", "")
	if h := as[health](t, a); a.StatusCode != 200 || h != (health{Status: "ready", Postgres: "ok", Redis: "ok"}) {
		t.Fatalf("readyz = %d %s", a.StatusCode, a.raw)
	}
	if a.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on the response")
	}
}

func TestReadinessWithRedisDownIsDegraded(t *testing.T) {
	t.Parallel()
	rdb, err := conn.Redis(context.Background(), testenv.DeadRedisURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, nil, nil, rdb)
	a := ts.request(t, "GET", "/readyz", "")
	if h := as[health](t, a); a.StatusCode != 200 || h.Redis != "degraded" || h.Postgres != "ok" {
		t.Fatalf("readyz with Redis down = %d %s, want 200 degraded", a.StatusCode, a.raw)
	}
}

// TestReadinessWithPostgresDownIs503: an instance that started on its database
// loses it (its connections terminated, new ones refused): /readyz says 503.
func TestReadinessWithPostgresDownIs503(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	ctx := context.Background()
	cfg := ts.DB.Config().ConnConfig.Copy()
	name := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
		t.Fatal(err)
	}
	a := ts.request(t, "GET", "/readyz", "")
	if a.StatusCode != 503 || as[health](t, a).Postgres != "unavailable" {
		t.Fatalf("readyz with PostgreSQL down = %d %s, want 503", a.StatusCode, a.raw)
	}
}

func TestRequestIDIsEchoedWhenSane(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	resp := ts.request(t, "GET", "/healthz", "", "X-Request-Id", "abc-123")
	if got := resp.Header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("X-Request-Id = %q, want the client's abc-123", got)
	}
	resp = ts.request(t, "GET", "/healthz", "", "X-Request-Id", "bad id\twith spaces")
	if got := resp.Header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \t") {
		t.Errorf("X-Request-Id = %q, want a fresh id instead of the unsafe one", got)
	}
}

// TestProblems: errors of the rings and of the router, a handler's panic and
// an unknown error are problems; a 5xx never shows internals.
func TestProblems(t *testing.T) {
	t.Parallel()
	ts := startInstance(t, instance{routes: func(e *echo.Echo) {
		e.GET("/test/panic", func(c echo.Context) error { panic("secret internals") })
		e.GET("/test/fail", func(c echo.Context) error {
			return fmt.Errorf("pq: relation \"secret_table\" does not exist")
		})
	}})
	tests := []struct {
		name, method, path, body string
		status                   int
		slug, detail             string
	}{
		{"unknown route", "GET", "/nowhere", "", 404, "not-found", "no route"},
		{"wrong method", "DELETE", "/healthz", "", 405, "method-not-allowed", ""},
		{"malformed JSON", "POST", "/v1/buyers", `{"name":`, 400, "invalid-request", "ends too soon"},
		{"unknown field", "POST", "/v1/buyers", `{"name":"x","admin":true}`, 400, "invalid-request", `unknown field "admin"`},
		{"70 KiB body", "POST", "/v1/buyers", `{"name":"` + strings.Repeat("x", 70<<10) + `"}`, 400, "invalid-request", "64 KiB"},
		{"panic", "GET", "/test/panic", "", 500, "internal-error", ""},
		{"driver error", "GET", "/test/fail", "", 500, "internal-error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ts.request(t, tt.method, tt.path, tt.body, "Content-Type", "application/json")
			if a.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d (%s)", a.StatusCode, tt.status, a.raw)
			}
			p := a.problem(t)
			if !p.is(tt.slug) || p.Status != tt.status || p.Title == "" {
				t.Errorf("problem = %s, want type /problems/%s", a.raw, tt.slug)
			}
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("detail %q does not say %q", p.Detail, tt.detail)
			}
			if strings.Contains(p.Detail, "secret") || strings.Contains(p.Detail, "pq:") {
				t.Errorf("a %d shows internals: %q", tt.status, p.Detail)
			}
		})
	}
}

func TestProblemPages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	for slug, pt := range httpapi.ProblemTypes() {
		resp, err := http.Get(ts.http.URL + "/problems/" + slug)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(page), pt.Title) {
			t.Errorf("/problems/%s = %d %q", slug, resp.StatusCode, page)
		}
	}
	if a := ts.request(t, "GET", "/problems/no-such-thing", ""); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("unknown slug = %d %s", a.StatusCode, a.raw)
	}
}

// TestInFlightBound: with two slow requests in flight and a bound of 2, the next
// request is refused with 503 and Retry-After: 1, and /healthz still answers.
func TestInFlightBound(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	ts := startInstance(t, instance{env: map[string]string{"STAGEDOOR_MAX_IN_FLIGHT": "2"}, routes: func(e *echo.Echo) {
		e.GET("/test/slow", func(c echo.Context) error {
			entered.Done()
			<-release
			return c.NoContent(204)
		})
	}})
	var done sync.WaitGroup
	for range 2 {
		done.Add(1)
		go func() {
			defer done.Done()
			resp, err := http.Get(ts.http.URL + "/test/slow")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 204 {
					t.Errorf("slow request = %d, want 204", resp.StatusCode)
				}
			}
		}()
	}
	entered.Wait()

	a := ts.request(t, "GET", "/test/slow", "")
	if a.StatusCode != 503 || !a.problem(t).is("service-overloaded") || a.problem(t).Bound != "in_flight" || a.Header.Get("Retry-After") != "1" {
		t.Errorf("third request = %d %s Retry-After %q, want 503 service-overloaded, bound in_flight, Retry-After: 1",
			a.StatusCode, a.raw, a.Header.Get("Retry-After"))
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if a := ts.request(t, "GET", path, ""); a.StatusCode != 200 {
			t.Errorf("%s while at the bound = %d, want 200", path, a.StatusCode)
		}
	}
	if got := metricValue(t, ts, `stagedoor_shed_total{bound="in_flight"}`); got != "1" {
		t.Errorf("stagedoor_shed_total{bound=in_flight} = %q, want 1", got)
	}
	if got := metricValue(t, ts, `stagedoor_http_requests_total{route="/test/slow",status="503"}`); got != "1" {
		t.Errorf("the refusal was not counted in stagedoor_http_requests_total: %q", got)
	}
	close(release)
	done.Wait()
	if a := ts.request(t, "GET", "/problems/rate-limited", ""); a.StatusCode != 200 {
		t.Errorf("after the slow requests finished, a request = %d", a.StatusCode)
	}
}

func TestMetricsPage(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	ts.request(t, "GET", "/healthz", "")
	ts.request(t, "GET", "/nowhere/at/all", "")
	if a := ts.request(t, "GET", "/metrics", ""); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("GET /metrics on the API = %d %s, want a not-found problem: the metrics have a listener of their own", a.StatusCode, a.raw)
	}
	resp, err := http.Get(ts.metrics.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`stagedoor_http_requests_total{route="/healthz",status="200"} 1`,
		`stagedoor_http_requests_total{route="unmatched",status="404"} 2`, // /nowhere/at/all and /metrics
		`stagedoor_http_request_duration_seconds_bucket{route="/healthz"`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// BenchmarkShedRefusal measures the server time of a 503 at the in-flight bound.
func BenchmarkShedRefusal(b *testing.B) {
	release := make(chan struct{})
	entered := make(chan struct{})
	ts := startInstance(b, instance{env: map[string]string{"STAGEDOOR_MAX_IN_FLIGHT": "1"}, routes: func(e *echo.Echo) {
		e.GET("/test/slow", func(c echo.Context) error { close(entered); <-release; return nil })
	}})
	go ts.Handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/test/slow", nil))
	<-entered
	defer close(release)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		ts.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/test/slow", nil))
		if rec.Code != 503 {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
