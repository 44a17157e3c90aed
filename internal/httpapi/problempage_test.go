package httpapi

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// A shed page: a browser's navigation to it is told in words, with a reload
// after Retry-After; a script's fetch of the same route, any route's
// refusal, and a navigation to a route that is no page get the problem's JSON.
func TestARefusedPageIsAPageInWords(t *testing.T) {
	overloaded := &Problem{Slug: "service-overloaded", Status: http.StatusServiceUnavailable,
		Detail: "the fleet-usage shedder refuses sheddable requests for now (level 1 of 2)", RetryAfter: 2 * time.Second}
	answer := func(path string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(req, rec)
		c.SetPath(path)
		writeProblem(c, overloaded)
		return rec
	}
	for _, header := range []map[string]string{
		{"Sec-Fetch-Mode": "navigate", "Accept": "text/html,application/xhtml+xml"},
		{"Accept": "text/html,application/xhtml+xml"}, // a browser that sends no Sec-Fetch-Mode
	} {
		rec := answer("/", header)
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != 503 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || rec.Header().Get("Retry-After") != "2" {
			t.Fatalf("%v: %d %q Retry-After %q", header, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"))
		}
		for _, want := range []string{"We're very busy right now", `http-equiv="refresh" content="2"`, "tries again by itself in 2 seconds"} {
			if !strings.Contains(body, want) {
				t.Errorf("%v: the page lacks %q:\n%s", header, want, body)
			}
		}
		for _, never := range []string{"shedder", "sheddable", "level 1", "{"} {
			if strings.Contains(body, never) {
				t.Errorf("%v: the page says %q:\n%s", header, never, body)
			}
		}
	}
	for _, c := range []struct {
		path   string
		header map[string]string
	}{
		{"/", map[string]string{"Sec-Fetch-Mode": "cors", "Accept": "*/*"}},
		{"/", map[string]string{"Accept": "application/json"}},
		{"/v1/events", map[string]string{"Sec-Fetch-Mode": "navigate", "Accept": "text/html"}},
	} {
		rec := answer(c.path, c.header)
		if rec.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(rec.Body.String(), `"shedder"`) && !strings.Contains(rec.Body.String(), `"type"`) {
			t.Errorf("%s %v: %q %s", c.path, c.header, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
}
