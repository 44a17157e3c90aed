package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestAnswersAreCompressedByTheirRing: a JSON answer of 1 KiB or more goes
// gzip-compressed to a client that takes gzip, decoding to the answer sent to
// one that does not, with Vary: Accept-Encoding; a smaller one and a problem
// go as they are; the live seat map is never compressed, and its first event
// arrives at once.
func TestAnswersAreCompressedByTheirRing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	var event string
	for range 6 { // six events: a list of about 3 KB
		event, _ = newEvent(t, ts, org, eventBody(2, 5))
	}
	vary := func(a answer) bool {
		return strings.Contains(strings.Join(a.Header.Values("Vary"), ","), "Accept-Encoding")
	}

	// The list of events changes only when one is made: read it twice.
	plain := ts.request(t, "GET", "/v1/events", "", "Accept-Encoding", "identity")
	packed := ts.request(t, "GET", "/v1/events", "", "Accept-Encoding", "gzip")
	if plain.StatusCode != 200 || packed.StatusCode != 200 || plain.Header.Get("Content-Encoding") != "" || packed.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET /v1/events = %d %q without gzip, %d %q with it", plain.StatusCode, plain.Header.Get("Content-Encoding"), packed.StatusCode, packed.Header.Get("Content-Encoding"))
	}
	if !bytes.Equal(gunzip(t, packed.raw), plain.raw) || len(plain.raw) < 1024 {
		t.Errorf("%d bytes compressed to %d do not decode to the plain answer", len(plain.raw), len(packed.raw))
	}
	t.Logf("GET /v1/events: %d bytes, %d compressed", len(plain.raw), len(packed.raw))
	if !vary(plain) || !vary(packed) {
		t.Errorf("Vary %q and %q, want Accept-Encoding on both", plain.Header.Values("Vary"), packed.Header.Values("Vary"))
	}
	for _, path := range []string{"/v1/events/" + event, "/v1/events/" + strings.Repeat("0", 8) + "-0000-0000-0000-000000000000"} {
		if a := ts.request(t, "GET", path, "", "Accept-Encoding", "gzip"); a.Header.Get("Content-Encoding") != "" || len(a.raw) >= 1024 {
			t.Errorf("GET %s = %d, %d bytes, Content-Encoding %q; want it as it is", path, a.StatusCode, len(a.raw), a.Header.Get("Content-Encoding"))
		}
	}

	// The stream, asked with gzip: as it is, its first event (the whole map) at once.
	conn, err := net.Dial("tcp", ts.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/events/%s/seats/stream HTTP/1.1\r\nHost: stagedoor\r\nAccept: text/event-stream\r\nAccept-Encoding: gzip\r\n\r\n", event)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the stream with gzip: Content-Encoding %q, Content-Type %q; want an event stream as it is", resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type"))
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || first != "event: snapshot\n" {
		t.Errorf("the stream's first line: %q, %v", first, err)
	}
}

// TestUIFilesAreKeptByTheirVersion: the pages name their files under
// /ui/v/{version}/, answered with Cache-Control immutable for a year (so are
// the modules they import by relative paths); the pages themselves, and a
// file without the version or under another, are revalidated (no-cache) by
// their ETags.
func TestUIFilesAreKeptByTheirVersion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	links := regexp.MustCompile(`(?:href|src)="(/ui/[^"]+)"`)
	version := ""
	for _, page := range []string{"/", "/door", "/docs/"} {
		a := ts.request(t, "GET", page, "")
		if a.StatusCode != 200 || a.Header.Get("Cache-Control") != "no-cache" || a.Header.Get("ETag") == "" {
			t.Fatalf("GET %s = %d, Cache-Control %q, ETag %q; want 200, no-cache and an ETag", page, a.StatusCode, a.Header.Get("Cache-Control"), a.Header.Get("ETag"))
		}
		found := links.FindAllStringSubmatch(string(a.raw), -1)
		if len(found) == 0 {
			t.Fatalf("%s links no /ui/ file", page)
		}
		for _, m := range found {
			v, _, ok := strings.Cut(strings.TrimPrefix(m[1], "/ui/v/"), "/")
			if !strings.HasPrefix(m[1], "/ui/v/") || !ok || len(v) != 12 || version != "" && v != version {
				t.Fatalf("%s links %s, want /ui/v/{one version of 12 digits}/…", page, m[1])
			}
			version = v
			if f := ts.request(t, "GET", m[1], ""); f.StatusCode != 200 || f.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || f.Header.Get("ETag") == "" {
				t.Errorf("GET %s = %d, Cache-Control %q; want 200, immutable, with its ETag", m[1], f.StatusCode, f.Header.Get("Cache-Control"))
			}
		}
	}
	for path, cache := range map[string]string{
		"/ui/v/" + version + "/js/session.js": "public, max-age=31536000, immutable", // imported by app.js, relatively
		"/ui/js/session.js":                   "no-cache",
		"/ui/v/000000000000/js/session.js":    "no-cache", // a page of another binary's
	} {
		if a := ts.request(t, "GET", path, ""); a.StatusCode != 200 || a.Header.Get("Cache-Control") != cache {
			t.Errorf("GET %s = %d, Cache-Control %q; want 200, %q", path, a.StatusCode, a.Header.Get("Cache-Control"), cache)
		}
	}
	if a := ts.request(t, "GET", "/ui/v/"+version+"/js/no-such-file.js", ""); a.StatusCode != 404 {
		t.Errorf("a missing file under the version = %d, want 404", a.StatusCode)
	}
}
