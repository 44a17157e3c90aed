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
	"strings"
	"testing"
	"time"

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

// The buyer's tickets are a wallet: grouped by order, newest first; a ticket
// scanned at the door looks used (stamped "Used", greyed) and a valid one
// does not; "Add to calendar" downloads an .ics; printing shows one ticket a
// page, the used one left out. Readable in light and dark mode.
func TestTicketsWallet(t *testing.T) {
	s := startStack(t, nil)
	org := s.signUp(t, "organizer")
	first, second := org.createEvent(t, "Early Show", 0), org.createEvent(t, "Late Show", 0)
	var key struct{ Key string }
	org.must(t, 201, "POST", "/v1/scanner-keys", map[string]string{"label": "Gate", "event_id": first.ID}, &key)

	b := newBrowser(t, s)
	email := newEmail("wally")
	b.signUp("buyer", "Wally", email)
	buyer := s.logIn(t, email)
	codes := buyer.buy(t, first.ID, first.Seats[0], first.Seats[1])
	buyer.buy(t, second.ID, second.Seats[0])
	s.scanner(t, key.Key).must(t, 200, "POST", "/v1/scans", map[string]string{"code": codes[0]}, nil)

	for _, mode := range []string{"light", "dark"} {
		b.colorScheme(mode)
		for _, width := range []int64{390, 1280} {
			b.viewport(width, 900)
			b.goTo("/tickets")
			b.waitHeading("My tickets")
			b.waitJS("three tickets", `document.querySelectorAll(".ticket").length === 3`)
			var orders []string
			json.Unmarshal(b.eval(`[...document.querySelectorAll(".order > h2")].map(h => h.textContent)`), &orders)
			if fmt.Sprint(orders) != "[Late Show Early Show]" {
				t.Errorf("the orders are %q, want the newest (Late Show) first", orders)
			}
			var used []struct {
				Stamp, Status string
				Opacity       string
			}
			json.Unmarshal(b.eval(`[...document.querySelectorAll(".ticket-used")].map(t => ({
				stamp: t.querySelector(".ticket-stamp")?.textContent ?? "",
				status: t.querySelector(".ticket-status").textContent,
				opacity: getComputedStyle(t.querySelector(".qr")).opacity}))`), &used)
			if len(used) != 1 || used[0].Stamp != "Used" || used[0].Status != "Used: scanned at the door" || used[0].Opacity == "1" {
				t.Errorf("the used tickets: %+v, want one stamped Used with a greyed QR code", used)
			}
			var stamps int
			json.Unmarshal(b.eval(`document.querySelectorAll(".ticket:not(.ticket-used) .ticket-stamp").length`), &stamps)
			if stamps != 0 {
				t.Errorf("%d valid tickets are stamped", stamps)
			}
			b.imageBytes("img.qr")
			b.noSidewaysScroll("tickets")
			b.page(fmt.Sprintf("wallet-%s-%d", mode, width))
		}
	}
	b.colorScheme("")

	// Add to calendar: the file the button makes.
	var ics string
	json.Unmarshal(b.eval(`(async () => {
		let made;
		const create = URL.createObjectURL;
		URL.createObjectURL = (blob) => { made = blob; return create(blob); };
		[...document.querySelectorAll(".calendar-button")].find(b => b.closest(".order").querySelector("h2").textContent === "Early Show").click();
		URL.createObjectURL = create;
		return await made.text();
	})()`), &ics)
	var starts time.Time
	org.must(t, 200, "GET", "/v1/events/"+first.ID, nil, &struct {
		StartsAt *time.Time `json:"starts_at"`
	}{&starts})
	for _, want := range []string{"BEGIN:VEVENT\r\n", "SUMMARY:Early Show\r\n", "DTSTART:" + starts.UTC().Format("20060102T150405Z") + "\r\n", "UID:" + first.ID + "@stagedoor\r\n"} {
		if !strings.Contains(ics, want) {
			t.Errorf("the calendar file lacks %q:\n%s", want, ics)
		}
	}

	// Printed: one ticket a page, the used one not printed.
	b.media("print")
	var printed []string
	json.Unmarshal(b.eval(`[...document.querySelectorAll(".ticket")].filter(t => getComputedStyle(t).display !== "none").map(t => getComputedStyle(t).breakAfter)`), &printed)
	if len(printed) != 2 || printed[0] != "page" {
		t.Errorf("printed tickets break %q, want two tickets, a page after the first", printed)
	}
	b.screenshot("wallet-print")
	b.media("")
}

// In dark mode the pages a visitor meets first keep axe's contrast: logging
// in, signing up, an event's page with its seat map, the door.
func TestDarkModePages(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Dark Night", 0)
	b := newBrowser(t, s)
	b.colorScheme("dark")
	for _, width := range []int64{390, 1280} {
		b.viewport(width, 900)
		b.open("/login")
		b.waitHeading("Log in")
		b.page(fmt.Sprintf("dark-login-%d", width))
		b.open("/signup")
		b.waitHeading("Sign up")
		b.page(fmt.Sprintf("dark-signup-%d", width))
		b.open("/events/" + ev.ID)
		b.waitHeading(ev.Name)
		b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
		b.page(fmt.Sprintf("dark-event-%d", width))
		b.run("open the door", chromedp.Navigate(b.base+"/door"))
		b.waitJS("the door's set-up", `!document.getElementById("setup").hidden`)
		b.page(fmt.Sprintf("dark-door-%d", width))
	}
}
