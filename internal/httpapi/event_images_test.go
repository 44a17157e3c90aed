package httpapi_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// aJPEG is a w×h JPEG.
func aJPEG(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEventImageOverHTTP: its organizer uploads an event's image (PUT), which
// the event and the list then name in image_url; it is served with an ETag
// (304 on If-None-Match) and cached for good at its versioned URL. Another
// organizer gets 404; a body over 2 MB 413, another type 415, a body that is
// no image 400; DELETE removes it.
func TestEventImageOverHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org, other := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Organizer)
	id, _ := newEvent(t, ts, org, eventBody(1, 2))
	path := "/v1/organizer/events/" + id + "/image"
	jpg := aJPEG(t, 320, 180)

	if a := ts.request(t, "PUT", path, jpg, append(other.bearer(), "Content-Type", "image/jpeg")...); a.StatusCode != 404 {
		t.Errorf("another organizer's upload = %d %s, want 404", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "DELETE", path, "", other.bearer()...); a.StatusCode != 404 {
		t.Errorf("another organizer's delete = %d, want 404", a.StatusCode)
	}
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		slug                    string
	}{
		{"gif", "image/gif", "GIF89a", 415, "unsupported-image-type"},
		{"no type", "", jpg, 415, "unsupported-image-type"},
		{"too large", "image/jpeg", jpg + strings.Repeat("x", 2<<20), 413, "image-too-large"},
		{"not an image", "image/png", "hello", 400, "invalid-request"},
	} {
		a := ts.request(t, "PUT", path, c.body, append(org.bearer(), "Content-Type", c.contentType)...)
		if a.StatusCode != c.status || a.problem(t).Type != "/problems/"+c.slug {
			t.Errorf("%s = %d %s, want %d %s", c.name, a.StatusCode, a.raw, c.status, c.slug)
		}
	}

	a := ts.request(t, "PUT", path, jpg, append(org.bearer(), "Content-Type", "image/jpeg; charset=binary")...)
	if a.StatusCode != 200 {
		t.Fatalf("upload = %d %s", a.StatusCode, a.raw)
	}
	var ev struct {
		ImageURL    *string `json:"image_url"`
		ImageWidth  int     `json:"image_width"`
		ImageHeight int     `json:"image_height"`
	}
	if err := json.Unmarshal(a.raw, &ev); err != nil || ev.ImageURL == nil || ev.ImageWidth != 320 || ev.ImageHeight != 180 {
		t.Fatalf("the event after upload: %s", a.raw)
	}
	waitFor(t, 5*time.Second, "the list to name the image", func() bool {
		return strings.Contains(string(ts.request(t, "GET", "/v1/events", "").raw), *ev.ImageURL)
	})

	img := ts.request(t, "GET", *ev.ImageURL, "")
	if img.StatusCode != 200 || img.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("image = %d %s", img.StatusCode, img.Header.Get("Content-Type"))
	}
	if cc := img.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("the versioned image's Cache-Control is %q", cc)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img.raw)); err != nil {
		t.Errorf("the image served is no JPEG: %v", err)
	}
	etag := img.Header.Get("ETag")
	plain := ts.request(t, "GET", "/v1/events/"+id+"/image", "")
	if plain.Header.Get("Cache-Control") != "public, no-cache" || plain.Header.Get("ETag") != etag {
		t.Errorf("the unversioned image: %q %q", plain.Header.Get("Cache-Control"), plain.Header.Get("ETag"))
	}
	if a := ts.request(t, "GET", "/v1/events/"+id+"/image", "", "If-None-Match", etag); a.StatusCode != 304 || len(a.raw) != 0 {
		t.Errorf("If-None-Match its ETag = %d (%d bytes), want 304", a.StatusCode, len(a.raw))
	}
	if a := ts.request(t, "GET", "/v1/events/"+id+"/image", "", "If-None-Match", `"other"`); a.StatusCode != 200 {
		t.Errorf("If-None-Match another ETag = %d, want 200", a.StatusCode)
	}

	if a := ts.request(t, "DELETE", path, "", org.bearer()...); a.StatusCode != 204 {
		t.Fatalf("delete = %d %s", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", "/v1/events/"+id+"/image", ""); a.StatusCode != 404 {
		t.Errorf("the image after delete = %d, want 404", a.StatusCode)
	}
	if a := ts.request(t, "GET", "/v1/organizer/events/"+id, "", org.bearer()...); !strings.Contains(string(a.raw), `"image_url":null`) {
		t.Errorf("the event after delete: %s", a.raw)
	}
}
