package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// colorScheme emulates the system's colour scheme ("dark", "light"; "" for
// the machine's own), which the pages follow with prefers-color-scheme.
func (b *browser) colorScheme(scheme string) {
	b.t.Helper()
	features := []*emulation.MediaFeature{}
	if scheme != "" {
		features = append(features, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: scheme})
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		b.t.Fatalf("emulating prefers-color-scheme %q: %v", scheme, err)
	}
	b.eval(`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`)
}

// The event list shows cards: a date block, the name, venue and time and the
// lowest price ("From $25.00", "Free"); one column on a phone, a grid on a
// desktop; readable (axe's contrast) in light and dark mode.
func TestEventCards(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	org.createEvent(t, "Night Music", 0) // Stalls $45, Balcony $25
	org.createEventOf(t, "Open Rehearsal", 0, apiclient.SeatedSection("Stalls", 2, 6, 0))
	org.createEvent(t, "Late Show", 0)
	b := newBrowser(t, s)
	for _, mode := range []string{"light", "dark"} {
		b.colorScheme(mode)
		for _, width := range []int64{390, 1280} {
			b.viewport(width, 900)
			b.open("/events")
			b.waitJS("the cards", `document.querySelectorAll(".event-card").length === 3`)
			var prices map[string]string
			json.Unmarshal(b.eval(`Object.fromEntries([...document.querySelectorAll(".event-card")].map(c =>
				[c.querySelector("h2").textContent, c.querySelector(".from-price")?.textContent ?? ""]))`), &prices)
			want := map[string]string{"Night Music": "From $25.00", "Open Rehearsal": "Free", "Late Show": "From $25.00"}
			if fmt.Sprint(prices) != fmt.Sprint(want) {
				t.Errorf("the cards' prices are %v, want %v", prices, want)
			}
			var block struct{ Day, Month string }
			json.Unmarshal(b.eval(`({day: document.querySelector(".date-day").textContent, month: document.querySelector(".date-month").textContent})`), &block)
			if block.Day == "" || block.Month == "" {
				t.Errorf("the date block is %+v, want a day and a month", block)
			}
			var columns int
			json.Unmarshal(b.eval(`new Set([...document.querySelectorAll(".event-card")].map(c => Math.round(c.getBoundingClientRect().left))).size`), &columns)
			if width == 390 && columns != 1 || width == 1280 && columns < 2 {
				t.Errorf("at %d px the cards are in %d columns", width, columns)
			}
			var bg string
			json.Unmarshal(b.eval(`getComputedStyle(document.documentElement).backgroundColor`), &bg)
			if dark := bg == "rgb(17, 19, 23)"; dark != (mode == "dark") {
				t.Errorf("in %s mode the page's background is %s", mode, bg)
			}
			b.noSidewaysScroll("events")
			b.page(fmt.Sprintf("events-%s-%d", mode, width))
		}
	}
	// The whole card answers to its link.
	b.colorScheme("")
	b.viewport(390, 900)
	var name string
	json.Unmarshal(b.eval(`document.querySelector(".event-card h2").textContent`), &name)
	b.click(".event-card:first-child .date-block")
	b.waitHeading(name)
}

// An organizer uploads an event's image from its page; the image is then on
// the event's card and its page, sized before it arrives (width and height),
// and loads under the CSP.
func TestEventImage(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	ev := org.createEvent(t, "Photo Night", 0)
	var jpg bytes.Buffer
	pic := image.NewRGBA(image.Rect(0, 0, 800, 450))
	for y := range 450 {
		for x := range 800 {
			pic.Set(x, y, color.RGBA{uint8(x / 4), uint8(y / 2), 160, 255})
		}
	}
	if err := jpeg.Encode(&jpg, pic, nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "poster.jpg")
	if err := os.WriteFile(file, jpg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, s)
	b.logIn(org.Email)
	b.open("/organizer/events/" + ev.ID)
	b.waitText("main", "This event has no image yet.")
	b.run("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`input[type="file"]`), []string{file}))
	b.clickButton("Upload image")
	b.waitText("#notice", "The image is saved.")
	b.waitJS("the preview", `document.querySelector(".event-image-preview")?.complete && document.querySelector(".event-image-preview").naturalWidth === 800`)
	b.page("image-uploaded")

	for _, width := range []int64{390, 1280} {
		b.viewport(width, 900)
		b.open("/events")
		b.waitJS("the card's image", `document.querySelector(".event-card-image")?.complete && document.querySelector(".event-card-image").naturalWidth === 800`)
		if w, h := b.attr(".event-card-image", "width"), b.attr(".event-card-image", "height"); w != "800" || h != "450" {
			t.Errorf("the card's image is sized %s×%s, want 800×450", w, h)
		}
		b.noSidewaysScroll("events")
		b.page(fmt.Sprintf("card-image-%d", width))
		b.open("/events/" + ev.ID)
		b.waitJS("the event's image", `document.querySelector("img.event-image")?.complete && document.querySelector("img.event-image").naturalWidth === 800`)
		if b.attr("img.event-image", "loading") == "lazy" {
			t.Error("the event page's image, above the fold, loads lazily")
		}
		b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
		b.page(fmt.Sprintf("event-image-%d", width))
	}
}
