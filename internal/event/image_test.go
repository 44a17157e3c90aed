package event

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// picture is a w×h image with a gradient, so that its encodings are not trivial.
func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 120, 255})
		}
	}
	return img
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withEXIF puts an APP1 (EXIF) segment holding secret right after the JPEG's
// start-of-image marker, as a camera does.
func withEXIF(jpg []byte, secret string) []byte {
	payload := append([]byte("Exif\x00\x00"), secret...)
	n := len(payload) + 2
	segment := append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, payload...)
	return append(append(append([]byte{}, jpg[:2]...), segment...), jpg[2:]...)
}

// TestProcessImageStripsMetadata: a JPEG's EXIF segment (where cameras put
// the place a photo was taken) is not in what is stored, which is a JPEG of
// the same size.
func TestProcessImageStripsMetadata(t *testing.T) {
	const secret = "GPS 48.8584 N 2.2945 E"
	upload := withEXIF(encodeJPEG(t, picture(64, 48)), secret)
	if _, err := jpeg.Decode(bytes.NewReader(upload)); err != nil || !bytes.Contains(upload, []byte(secret)) {
		t.Fatalf("the upload is not a JPEG with EXIF: %v", err)
	}
	img, err := ProcessImage("image/jpeg", upload)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(img.Data, []byte("Exif")) || bytes.Contains(img.Data, []byte(secret)) {
		t.Error("the stored image still holds the EXIF segment")
	}
	if bytes.Contains(img.Data, []byte{0xFF, 0xE1}) {
		t.Error("the stored image has an APP1 segment")
	}
	if img.ContentType != "image/jpeg" || img.Width != 64 || img.Height != 48 || len(img.ETag) < 10 {
		t.Errorf("stored %s %d×%d etag %s, want a 64×48 JPEG with an ETag", img.ContentType, img.Width, img.Height, img.ETag)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img.Data)); err != nil {
		t.Errorf("the stored image is not a JPEG: %v", err)
	}
}

// TestProcessImageScalesDownAndKeepsPNG: a PNG stays a PNG; one wider than
// MaxImageWidth is scaled to it, its proportions kept.
func TestProcessImageScalesDownAndKeepsPNG(t *testing.T) {
	img, err := ProcessImage("image/png", encodePNG(t, picture(2000, 500)))
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || format != "png" || cfg.Width != MaxImageWidth || cfg.Height != 400 {
		t.Errorf("stored %s %d×%d (%v), want a PNG of 1600×400", format, cfg.Width, cfg.Height, err)
	}
	if img.Width != cfg.Width || img.Height != cfg.Height || img.ContentType != "image/png" {
		t.Errorf("the image says %s %d×%d", img.ContentType, img.Width, img.Height)
	}
}

// webp1x1 is a lossless WebP of one pixel.
var webp1x1 = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

// TestProcessImageRefuses: a type that is not an image of the three is
// ErrImageType; a body that is not what its type says, a damaged one, and one
// whose header claims too many pixels (checked before decoding: a
// decompression bomb) are errkind.Invalid; too many bytes ErrImageTooLarge.
func TestProcessImageRefuses(t *testing.T) {
	jpg := encodeJPEG(t, picture(16, 16))
	// A JPEG whose start-of-frame claims 20000×20000 pixels.
	bomb := append([]byte{}, jpg...)
	sof := bytes.Index(bomb, []byte{0xFF, 0xC0})
	if sof < 0 {
		t.Fatal("no SOF0 in the JPEG")
	}
	bomb[sof+5], bomb[sof+6], bomb[sof+7], bomb[sof+8] = 0x4E, 0x20, 0x4E, 0x20
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(bomb)); err != nil || cfg.Width != 20000 {
		t.Fatalf("the bomb's header says %+v (%v)", cfg, err)
	}
	for name, c := range map[string]struct {
		contentType string
		data        []byte
		want        error
	}{
		"gif":             {"image/gif", []byte("GIF89a"), ErrImageType},
		"svg":             {"image/svg+xml", []byte("<svg/>"), ErrImageType},
		"png said jpeg":   {"image/jpeg", encodePNG(t, picture(8, 8)), errkind.Invalid},
		"not an image":    {"image/png", []byte("hello"), errkind.Invalid},
		"damaged":         {"image/jpeg", jpg[:len(jpg)/2], errkind.Invalid},
		"too many pixels": {"image/jpeg", bomb, errkind.Invalid},
		"too many bytes":  {"image/jpeg", append(jpg, make([]byte, MaxImageBytes)...), ErrImageTooLarge},
	} {
		if _, err := ProcessImage(c.contentType, c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if img, err := ProcessImage("image/webp", webp1x1); err != nil || img.ContentType != "image/jpeg" || img.Width != 1 {
		t.Errorf("a WebP: %+v, %v; want a 1×1 JPEG", img.ContentType, err)
	}
}

// TestEventImageIsStoredAndListed: its organizer sets, replaces and deletes an
// event's image; the event and the list carry its ETag and size; another
// organizer's attempt is errkind.NotFound and changes nothing.
func TestEventImageIsStoredAndListed(t *testing.T) {
	t.Parallel()
	events, _, organizer := newEvents(t)
	ctx := context.Background()
	e := create(t, events, draft(organizer))
	if e.Image.ETag != nil {
		t.Fatal("a new event has an image")
	}
	img, err := events.SetImage(ctx, organizer, e.ID, "image/jpeg", encodeJPEG(t, picture(40, 30)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.SetImage(ctx, "00000000-0000-0000-0000-000000000001", e.ID, "image/jpeg", encodeJPEG(t, picture(8, 8))); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer's upload: %v, want not found", err)
	}
	if err := events.DeleteImage(ctx, "00000000-0000-0000-0000-000000000001", e.ID); !errors.Is(err, errkind.NotFound) {
		t.Errorf("another organizer's delete: %v, want not found", err)
	}
	got, err := events.Image(ctx, e.ID)
	if err != nil || got.ETag != img.ETag || !bytes.Equal(got.Data, img.Data) {
		t.Fatalf("read back %s (%v), want %s", got.ETag, err, img.ETag)
	}
	own, err := events.Own(ctx, organizer, e.ID)
	if err != nil || own.Image.ETag == nil || *own.Image.ETag != img.ETag || own.Image.Width != 40 || own.Image.Height != 30 {
		t.Errorf("the event's image: %+v (%v)", own.Image, err)
	}
	page, err := events.List(ctx, ListQuery{Limit: 5})
	if err != nil || len(page.Events) != 1 || page.Events[0].Image.ETag == nil {
		t.Errorf("the list: %+v (%v), want the event with its image", page.Events, err)
	}
	if err := events.DeleteImage(ctx, organizer, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Image(ctx, e.ID); !errors.Is(err, errkind.NotFound) {
		t.Errorf("after delete: %v, want not found", err)
	}
}
