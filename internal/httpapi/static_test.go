package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/web"
)

// TestStaticAnswersAreWhatTheyLog: each static path gets its true answer (a
// directory is a 404 problem, never a text 500 or a redirect), and the access
// log and the metrics record that answer's real status and size.
func TestStaticAnswersAreWhatTheyLog(t *testing.T) {
	t.Parallel()
	logs := &testenv.LogBuffer{}
	ts := startInstance(t, instance{logs: logs})
	index, err := fs.ReadFile(web.Static, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	// The page as sent: each /ui/ link under /ui/v/{12 digits}/ (uiversion.go).
	versioned := len(index) + strings.Count(string(index), `="/ui/`)*len("v/123456789012/")
	css, err := fs.ReadFile(web.Static, "app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path        string
		status      int
		contentType string
		size        int // of the body as sent; -1: a problem, whatever its length
	}{
		{"/ui/", 404, "application/problem+json", -1},
		{"/ui/js/", 404, "application/problem+json", -1},
		{"/ui/js", 404, "application/problem+json", -1},
		{"/ui/vendor/", 404, "application/problem+json", -1},
		{"/ui/index.html", 200, "text/html; charset=utf-8", versioned},
		{"/ui/no-such-file.js", 404, "application/problem+json", -1},
		{"/ui/app.css", 200, "text/css; charset=utf-8", len(css)},
		{"/", 200, "text/html; charset=utf-8", versioned},
		{"/docs/no-such-file.js", 404, "application/problem+json", -1},
	} {
		t.Run(tt.path, func(t *testing.T) {
			// Accept-Encoding set: the answer is read as sent, not decoded.
			a := ts.request(t, "GET", tt.path, "", "Accept-Encoding", "identity", "X-Request-Id", "static-"+tt.path)
			if a.StatusCode != tt.status || a.Header.Get("Content-Type") != tt.contentType {
				t.Fatalf("GET %s = %d %q %.200s, want %d %q", tt.path, a.StatusCode, a.Header.Get("Content-Type"), a.raw, tt.status, tt.contentType)
			}
			if tt.size >= 0 && len(a.raw) != tt.size {
				t.Errorf("GET %s: %d bytes, want %d", tt.path, len(a.raw), tt.size)
			}
			if tt.status == 404 && !a.problem(t).is("not-found") {
				t.Errorf("GET %s: %s, want a not-found problem", tt.path, a.raw)
			}
			var logged map[string]any
			waitFor(t, 5*time.Second, "the access log line of "+tt.path, func() bool {
				for _, line := range logs.Lines(t) {
					if line["msg"] == "request" && line["request_id"] == "static-"+tt.path {
						logged = line
						return true
					}
				}
				return false
			})
			if logged["status"] != float64(tt.status) || logged["bytes"] != float64(len(a.raw)) {
				t.Errorf("GET %s logged status %v, %v bytes; it answered %d, %d bytes", tt.path, logged["status"], logged["bytes"], a.StatusCode, len(a.raw))
			}
		})
	}
	for route, want := range map[string]string{
		`{route="/ui/*",status="404"}`:   "5", // /ui/, /ui/js/, /ui/js, /ui/vendor/, /ui/no-such-file.js
		`{route="/ui/*",status="200"}`:   "2",
		`{route="/docs/*",status="404"}`: "1",
	} {
		if got := metricValue(t, ts, "stagedoor_http_requests_total"+route); got != want {
			t.Errorf("stagedoor_http_requests_total%s = %q, want %s", route, got, want)
		}
	}
}

// gunzip decodes a gzip body, failing the test when it is not one.
func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	return out
}

// TestLargeFilesAreSentCompressed: the API reference's bundle, the front end's
// files, the contract and a seat map go compressed to a client that takes
// gzip: smaller, decoding to the very bytes sent to one that does not, with
// Vary: Accept-Encoding, an ETag of each form's own, and 304 for If-None-Match.
func TestLargeFilesAreSentCompressed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	event, _ := newEvent(t, ts, org, eventBody(50, 100)) // 5,000 seats
	for _, path := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/ui/js/seatmap.js", "/ui/app.css",
		"/", "/openapi.yaml", "/v1/events/" + event + "/seats"} {
		t.Run(path, func(t *testing.T) {
			plain := ts.request(t, "GET", path, "", "Accept-Encoding", "identity")
			packed := ts.request(t, "GET", path, "", "Accept-Encoding", "br;q=1, gzip;q=0.8")
			if plain.StatusCode != 200 || packed.StatusCode != 200 {
				t.Fatalf("GET %s = %d and %d", path, plain.StatusCode, packed.StatusCode)
			}
			if plain.Header.Get("Content-Encoding") != "" || packed.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Content-Encoding %q without gzip, %q with it", plain.Header.Get("Content-Encoding"), packed.Header.Get("Content-Encoding"))
			}
			decoded := gunzip(t, packed.raw)
			if isMap := strings.HasPrefix(path, "/v1/"); isMap {
				// Two reads may be of two snapshots (as_of): the same seats.
				a, b := as[apiclient.SeatMap](t, answer{raw: decoded}), as[apiclient.SeatMap](t, plain)
				if len(a.Seats) != 5000 || !slices.Equal(a.Seats, b.Seats) {
					t.Fatalf("the compressed seat map does not decode to the plain one's seats")
				}
			} else if !bytes.Equal(decoded, plain.raw) {
				t.Fatalf("the compressed answer does not decode to the plain one")
			}
			t.Logf("%s: %d bytes, %d compressed (%.0f %%)", path, len(plain.raw), len(packed.raw), 100*float64(len(packed.raw))/float64(len(plain.raw)))
			if float64(len(packed.raw)) > 0.7*float64(len(plain.raw)) {
				t.Errorf("compressed to %d of %d bytes: not worth the name", len(packed.raw), len(plain.raw))
			}
			if n, _ := strconv.Atoi(packed.Header.Get("Content-Length")); n != len(packed.raw) && packed.Header.Get("Content-Length") != "" {
				t.Errorf("Content-Length %s for %d bytes", packed.Header.Get("Content-Length"), len(packed.raw))
			}
			for _, a := range []answer{plain, packed} {
				if !strings.Contains(strings.Join(a.Header.Values("Vary"), ","), "Accept-Encoding") {
					t.Errorf("Vary = %q, want Accept-Encoding", a.Header.Values("Vary"))
				}
			}
			if strings.HasPrefix(path, "/v1/") {
				return // a seat map changes each second: no ETag
			}
			tag, gzTag := plain.Header.Get("ETag"), packed.Header.Get("ETag")
			if tag == "" || gzTag == "" || tag == gzTag {
				t.Fatalf("ETags %q and %q: want one per form", tag, gzTag)
			}
			for _, tt := range []struct{ tag, encoding string }{{tag, "identity"}, {gzTag, "gzip"}} {
				a := ts.request(t, "GET", path, "", "Accept-Encoding", tt.encoding, "If-None-Match", tt.tag)
				if a.StatusCode != 304 || len(a.raw) != 0 || a.Header.Get("ETag") != tt.tag {
					t.Errorf("If-None-Match %s = %d, %d bytes, ETag %q; want 304, no body", tt.tag, a.StatusCode, len(a.raw), a.Header.Get("ETag"))
				}
			}
			// The other form's tag is another representation: sent whole.
			if a := ts.request(t, "GET", path, "", "Accept-Encoding", "gzip", "If-None-Match", tag); a.StatusCode != 200 {
				t.Errorf("gzip with the plain form's ETag = %d, want 200", a.StatusCode)
			}
		})
	}
	// Small files, and clients that refuse gzip, get the file as it is.
	for _, tt := range []struct{ path, accept string }{{"/docs/favicon-32x32.png", "gzip"}, {"/ui/app.css", "gzip;q=0"}, {"/ui/app.css", "*;q=0"}} {
		if a := ts.request(t, "GET", tt.path, "", "Accept-Encoding", tt.accept); a.StatusCode != 200 || a.Header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s, Accept-Encoding %s = %d, Content-Encoding %q; want it as it is", tt.path, tt.accept, a.StatusCode, a.Header.Get("Content-Encoding"))
		}
	}
}
