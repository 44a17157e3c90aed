package httpapi

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// limitedServer has GET /test/limited, limited by hold-buyer on the X-Buyer
// header and hold-organizer on X-Organizer, and counts the handler's runs.
func limitedServer(t *testing.T, env map[string]string) (*testServer, *atomic.Int64) {
	ts := newTestServer(t, env, nil, nil)
	var ran atomic.Int64
	checks := func(c echo.Context) ([]ratelimit.Check, error) {
		cs := []ratelimit.Check{{Limit: "hold-buyer", Key: c.Request().Header.Get("X-Buyer")}}
		if org := c.Request().Header.Get("X-Organizer"); org != "" {
			cs = append(cs, ratelimit.Check{Limit: "hold-organizer", Key: org})
		}
		return cs, nil
	}
	ts.echo.GET("/test/limited", func(c echo.Context) error {
		ran.Add(1)
		return c.NoContent(http.StatusNoContent)
	}, ts.limitBy(checks))
	return ts, &ran
}

func TestRateLimitHeadersAndRefusal(t *testing.T) {
	t.Parallel()
	ts, ran := limitedServer(t, nil) // hold-buyer 10/1m, hold-organizer 200/1s

	type want struct {
		status                         int
		policy, rateLimit              string
		limit, remaining, reset, retry string
	}
	steps := []want{
		{204, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=9;t=6`, "10", "9", "6", ""},
		{204, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=8;t=12`, "10", "8", "12", ""},
	}
	for i := 3; i <= 10; i++ {
		steps = append(steps, want{status: 204})
	}
	steps = append(steps, want{429, `"hold-buyer";q=10;w=60`, `"hold-buyer";r=0;t=60`, "10", "0", "60", "6"})

	for i, w := range steps {
		resp, body := ts.do(t, "GET", "/test/limited", "", "X-Buyer", "b1", "X-Organizer", "o1")
		if resp.StatusCode != w.status {
			t.Fatalf("request %d: status %d, want %d (%v)", i+1, resp.StatusCode, w.status, body)
		}
		if w.policy == "" {
			continue
		}
		for header, value := range map[string]string{
			"RateLimit-Policy": w.policy, "RateLimit": w.rateLimit, "X-RateLimit-Limit": w.limit,
			"X-RateLimit-Remaining": w.remaining, "X-RateLimit-Reset": w.reset, "Retry-After": w.retry,
		} {
			if got := resp.Header.Get(header); got != value {
				t.Errorf("request %d: %s = %q, want %q", i+1, header, got, value)
			}
		}
		if w.status == 429 {
			ms, _ := body["retry_after_ms"].(float64)
			violated, _ := body["violated-policies"].([]any)
			if body["type"] != "/problems/rate-limited" || body["limit"] != "hold-buyer" ||
				len(violated) != 1 || violated[0] != "hold-buyer" || ms < 5000 || ms > 6000 {
				t.Errorf("refusal = %v", body)
			}
		}
	}
	if got := ran.Load(); got != 10 {
		t.Errorf("the handler ran %d times, want 10: a refusal must not reach it", got)
	}
}

func TestRateLimitTightestOfTwoAndNothingSpentOnRefusal(t *testing.T) {
	t.Parallel()
	ts, ran := limitedServer(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_ORGANIZER": "2/1m"})

	resp, _ := ts.do(t, "GET", "/test/limited", "", "X-Buyer", "b1", "X-Organizer", "o1")
	if got := resp.Header.Get("RateLimit"); got != `"hold-organizer";r=1;t=30` {
		t.Errorf("headers show %q, want the tighter hold-organizer", got)
	}
	ts.do(t, "GET", "/test/limited", "", "X-Buyer", "b2", "X-Organizer", "o1")
	resp, body := ts.do(t, "GET", "/test/limited", "", "X-Buyer", "b3", "X-Organizer", "o1")
	if resp.StatusCode != 429 || body["limit"] != "hold-organizer" || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("third buyer on the organizer = %d %v Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	// b3 was refused by the organizer: its own bucket must still be full.
	resp, _ = ts.do(t, "GET", "/test/limited", "", "X-Buyer", "b3")
	if got := resp.Header.Get("X-RateLimit-Remaining"); resp.StatusCode != 204 || got != "9" {
		t.Errorf("b3 alone: %d, remaining %q; want 204 and 9 (the refusal spent no buyer token)", resp.StatusCode, got)
	}
	if got := ran.Load(); got != 3 {
		t.Errorf("handler ran %d times, want 3", got)
	}
}

func TestRetryAfterRoundsUpToWholeSeconds(t *testing.T) {
	t.Parallel()
	ts, _ := limitedServer(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "5/1s"})
	var resp *http.Response
	var body map[string]any
	for range 6 {
		resp, body = ts.do(t, "GET", "/test/limited", "", "X-Buyer", "fast")
	}
	ms, _ := body["retry_after_ms"].(float64)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || ms < 1 || ms > 200 {
		t.Errorf("6th of 5/1s = %d, Retry-After %q, retry_after_ms %v; want 429, 1, at most 200",
			resp.StatusCode, resp.Header.Get("Retry-After"), ms)
	}
}
