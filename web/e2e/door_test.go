package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// door is a stack with an event, a buyer's tickets and a scanner key bound to
// the event, for the door page.
type door struct {
	s       *stack
	org     *client
	buyer   *client
	event   event
	key     string
	tickets []ticketCode
}

type ticketCode struct{ ID, Code string }

func newDoor(t *testing.T, tickets int) *door {
	t.Helper()
	s := startStack(t, map[string]string{"STAGEDOOR_MAX_HELD_SEATS": "100", "STAGEDOOR_LIMIT_HOLD_BUYER": "1000/1s"})
	d := &door{s: s, org: s.signUp(t, "organizer"), buyer: s.signUp(t, "buyer")}
	d.event = d.org.createEvent(t, "Door night", 0)
	for i := 0; i < tickets; i += 10 {
		d.buyer.buy(t, d.event.ID, d.event.Seats[i:min(i+10, tickets)]...)
	}
	var list struct{ Tickets []struct{ ID, Code string } }
	d.buyer.must(t, 200, "GET", "/v1/tickets", nil, &list)
	for _, tk := range list.Tickets {
		d.tickets = append(d.tickets, ticketCode{tk.ID, tk.Code})
	}
	var key struct{ Key string }
	d.org.must(t, 201, "POST", "/v1/scanner-keys", map[string]string{"label": "North gate", "event_id": d.event.ID}, &key)
	d.key = key.Key
	return d
}

// fakeCamera makes a video of the ticket's QR code, as the buyer's page shows
// it, for Chromium's fake camera.
func (d *door) fakeCamera(t *testing.T, tk ticketCode) chromedp.ExecAllocatorOption {
	t.Helper()
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("the door test needs ffmpeg (scripts/ensure-browser.sh installs it)")
	}
	dir := t.TempDir()
	png := d.buyer.must(t, 200, "GET", "/v1/tickets/"+tk.ID+"/qr", nil, nil)
	if err := os.WriteFile(filepath.Join(dir, "qr.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	video := filepath.Join(dir, "ticket.y4m")
	out, err := exec.Command(ffmpeg, "-loglevel", "error", "-loop", "1", "-i", filepath.Join(dir, "qr.png"),
		"-vf", "scale=480:480,pad=640:480:80:0:white,format=yuv420p", "-r", "10", "-t", "2", video).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	return func(a *chromedp.ExecAllocator) {
		chromedp.Flag("use-fake-device-for-media-stream", true)(a)
		chromedp.Flag("use-fake-ui-for-media-stream", true)(a)
		chromedp.Flag("use-file-for-fake-video-capture", video)(a)
	}
}

// setUp opens the door page and gives it the scanner key.
func (b *browser) setUpDoor(key string) {
	b.t.Helper()
	b.run("open /door", chromedp.Navigate(b.base+"/door"))
	b.waitJS("the set-up form", `!document.getElementById("setup").hidden`)
	b.fill("Scanner key", key)
	b.clickButton("Use this key")
	b.waitJS("the scanning screen", `!document.getElementById("scanning").hidden`)
	b.waitJS("the keys synced", `Object.keys(JSON.parse(localStorage.getItem("stagedoor.door") || "{}").keys || {}).length > 0`)
}

// scanTyped scans a code as a keyboard-wedge scanner does: characters, then
// Enter, in the focused field; and waits for the verdict.
func (b *browser) scanTyped(code string) string {
	b.t.Helper()
	before := b.scansSeen()
	b.run("typing a code", chromedp.SendKeys(chromedp.ID("code"), code+"\r"))
	b.waitJS("a verdict", "window.doorTimings.length > "+before)
	return b.verdict()
}

func (b *browser) scansSeen() string {
	return string(b.eval(`window.doorTimings.length`))
}

// verdict is the verdict's words as written (the page shows them in capitals).
func (b *browser) verdict() string {
	var v string
	if err := json.Unmarshal(b.eval(`document.querySelector("#verdict .verdict-word").textContent + " · " +
		document.querySelector("#verdict .verdict-detail").textContent`), &v); err != nil {
		b.t.Fatal(err)
	}
	return v
}

// TestDoorAdmitsOnceOnlineAndOffline: the door page, with a fake camera
// showing a real ticket's QR code, admits it, and when the camera reads it
// again a few seconds on it still says ADMITTED, "just now", asking the
// server nothing; a keyboard-wedge scan admits another, read again at once
// ADMITTED too, and after another code "already scanned". With the API
// blocked, a signed ticket is checked on the device, admitted "offline" and
// queued, read again ADMITTED, after a reload refused as already scanned on
// this device; a forged one refused; with the API back, the queue syncs and
// the organizer's audit shows the offline admission.
func TestDoorAdmitsOnceOnlineAndOffline(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 6)
	b := newBrowser(t, d.s, d.fakeCamera(t, d.tickets[0]))
	b.setUpDoor(d.key)
	b.page("door-ready")

	b.clickButton("Use the camera")
	b.waitJS("the camera's verdict", `document.getElementById("verdict").dataset.kind === "admitted"`)
	b.screenshot("door-admitted-camera")
	if v := b.verdict(); !strings.Contains(v, "Admitted") || !strings.Contains(v, "row A") {
		t.Errorf("camera scan: %q, want Admitted with the seat", v)
	}
	// The camera keeps showing the same ticket: 3 s on, it is read again,
	// within 10 s: its first verdict again, not "already scanned".
	b.waitJS("the same ticket read again", `document.querySelector("#verdict .verdict-detail").textContent.endsWith("just now")`)
	b.screenshot("door-admitted-again")
	if v := b.verdict(); !strings.HasPrefix(v, "Admitted") || !strings.Contains(v, "row A") {
		t.Errorf("the same ticket read again: %q, want Admitted with the seat, just now", v)
	}
	b.clickButton("Stop the camera")
	if n := d.scansOf(t, d.tickets[0].ID); n != 1 {
		t.Errorf("the audit has %d scans of the camera's ticket, want 1: a code read again is not asked again", n)
	}

	if v := b.scanTyped(d.tickets[1].Code); !strings.HasPrefix(v, "Admitted") {
		t.Errorf("keyboard-wedge scan: %q, want Admitted", v)
	}
	if focus := string(b.eval(`document.activeElement.id`)); focus != `"code"` {
		t.Errorf("after a scan with a keyboard the focus is on %s, want the code field (a wedge scanner's next code)", focus)
	}
	if v := b.scanTyped(d.tickets[1].Code); !strings.HasPrefix(v, "Admitted") || !strings.HasSuffix(v, "just now") {
		t.Errorf("the same code at once: %q, want Admitted … just now", v)
	}
	if v := b.scanTyped("NOT-A-TICKET"); !strings.HasPrefix(v, "Invalid") {
		t.Errorf("an unknown code: %q, want Invalid", v)
	}
	if v := b.scanTyped(d.tickets[1].Code); !strings.HasPrefix(v, "Already scanned") {
		t.Errorf("the first code again after another: %q, want Already scanned (a second use)", v)
	}
	if q := b.text("#count-admitted"); q != "2" {
		t.Errorf("%s admitted on the counter, want 2: a code read again is not counted again", q)
	}
	b.checkAccessibility("door-after-scans")

	// The organizer revokes ticket 5; the device learns of it at its next sync.
	d.org.must(t, 204, "DELETE", "/v1/organizer/tickets/"+d.tickets[5].ID, nil, nil)
	b.waitJS("the revocation synced", `JSON.parse(localStorage.getItem("stagedoor.door")).revoked[`+quote(d.tickets[5].ID)+`]`)

	// The network fails: the device decides.
	b.blockAPI(true)
	if v := b.scanTyped(d.tickets[2].Code); !strings.HasPrefix(v, "Admitted") || !strings.Contains(v, "offline") {
		t.Errorf("offline scan: %q, want Admitted … offline", v)
	}
	b.waitText("#network", "Offline")
	b.screenshot("door-admitted-offline")
	if v := b.scanTyped(d.tickets[2].Code); !strings.HasPrefix(v, "Admitted") || !strings.HasSuffix(v, "offline · just now") {
		t.Errorf("the same ticket again at once, offline: %q, want Admitted … offline · just now", v)
	}
	// Reloaded, the device has forgotten the last code, not what it admitted.
	b.run("reload the door", chromedp.Reload())
	b.waitJS("the scanning screen", `!document.getElementById("scanning").hidden`)
	if v := b.scanTyped(d.tickets[2].Code); !strings.HasPrefix(v, "Already scanned") || !strings.Contains(v, "on this device") {
		t.Errorf("the same ticket again offline after a reload: %q, want Already scanned on this device", v)
	}
	forged := []byte(d.tickets[3].Code) // one character of the signature changed
	forged[100] = map[bool]byte{true: 'A', false: 'B'}[forged[100] != 'A']
	if v := b.scanTyped(string(forged)); !strings.HasPrefix(v, "Invalid") {
		t.Errorf("a forged code offline: %q, want Invalid", v)
	}
	if v := b.scanTyped(d.tickets[5].Code); !strings.HasPrefix(v, "Revoked") {
		t.Errorf("a revoked ticket offline: %q, want Revoked", v)
	}
	// Another door, still online, admits ticket 4; this one, offline, admits it too.
	d.s.scanner(t, d.key).must(t, 200, "POST", "/v1/scans", map[string]string{"code": d.tickets[4].Code}, nil)
	if v := b.scanTyped(d.tickets[4].Code); !strings.HasPrefix(v, "Admitted") {
		t.Errorf("ticket 4 offline: %q, want Admitted (the device cannot know)", v)
	}
	if q := b.text("#count-queued"); q != "2" {
		t.Errorf("%s scans wait to sync, want 2", q)
	}

	// The network is back: the queue syncs, and the audit has the offline admission.
	b.blockAPI(false)
	b.waitJS("the queue synced", `document.getElementById("count-queued").textContent === "0"`)
	b.waitText("#network", "Online")
	var audit struct {
		Scans []struct {
			TicketID *string `json:"ticket_id"`
			Result   string  `json:"result"`
			Offline  bool    `json:"offline"`
		}
	}
	d.org.must(t, 200, "GET", "/v1/events/"+d.event.ID+"/scans", nil, &audit)
	found := slices.ContainsFunc(audit.Scans, func(s struct {
		TicketID *string `json:"ticket_id"`
		Result   string  `json:"result"`
		Offline  bool    `json:"offline"`
	}) bool {
		return s.TicketID != nil && *s.TicketID == d.tickets[2].ID && s.Result == "admitted" && s.Offline
	})
	if !found {
		t.Errorf("the audit has no offline admission of ticket 2: %+v", audit.Scans)
	}
	b.page("door-synced")

	// The organizer's audit page shows the offline admissions and the conflict.
	b.logIn(d.org.Email)
	b.open("/organizer/events/" + d.event.ID + "/scans")
	b.waitText("table", "Conflict: admitted twice")
	b.waitText("table", "offline")
	b.page("audit-offline-and-conflict")
}

// TestDoorScanToVerdict measures, from the page's own timing, how long a scan
// takes from the code entered to the verdict on screen: 200 scans online, then
// 50 checked offline. It reports the figures; it asserts no time.
func TestDoorScanToVerdict(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 20)
	b := newBrowser(t, d.s)
	b.setUpDoor(d.key)
	scan := func(code string) {
		before := b.scansSeen()
		b.eval(`(() => { const f = document.getElementById("code"); f.value = ` + quote(code) + `;
			document.getElementById("scan-form").requestSubmit(); })()`)
		b.waitJS("a verdict", "window.doorTimings.length > "+before)
	}
	for i := range 200 {
		scan(d.tickets[i%len(d.tickets)].Code) // 20 admissions, then already_scanned
	}
	online := timings(t, b)
	b.blockAPI(true)
	scan("NOT-SIGNED-FIRST") // the first finds the network down
	b.eval(`window.doorTimings.length = 0`)
	for i := range 50 {
		scan(d.tickets[i%len(d.tickets)].Code)
	}
	offline := timings(t, b)
	t.Logf("scan to verdict on screen, online: median %v, p99 %v (%d scans)", median(online), p99(online), len(online))
	t.Logf("scan to verdict on screen, offline (signature checked on the device): median %v, p99 %v (%d scans)", median(offline), p99(offline), len(offline))
	if len(online) != 200 || len(offline) != 50 {
		t.Errorf("%d online and %d offline timings, want 200 and 50", len(online), len(offline))
	}
}

// scansOf is how many scans of the ticket the organizer's audit has.
func (d *door) scansOf(t *testing.T, ticketID string) int {
	t.Helper()
	var audit struct {
		Scans []struct {
			TicketID *string `json:"ticket_id"`
		}
	}
	d.org.must(t, 200, "GET", "/v1/events/"+d.event.ID+"/scans", nil, &audit)
	n := 0
	for _, s := range audit.Scans {
		if s.TicketID != nil && *s.TicketID == ticketID {
			n++
		}
	}
	return n
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func timings(t *testing.T, b *browser) []time.Duration {
	t.Helper()
	var ms []float64
	if err := json.Unmarshal(b.eval(`window.doorTimings`), &ms); err != nil {
		t.Fatal(err)
	}
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m * float64(time.Millisecond))
	}
	slices.Sort(out)
	return out
}

func median(d []time.Duration) time.Duration { return d[len(d)/2].Round(100 * time.Microsecond) }
func p99(d []time.Duration) time.Duration    { return d[len(d)*99/100].Round(100 * time.Microsecond) }

// blockAPI makes every request of the page to the API fail, as a dead network
// would (or lets them through again).
func (b *browser) blockAPI(block bool) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		b.t.Fatal(err)
	}
	patterns := []*network.BlockPattern{}
	if block {
		patterns = append(patterns, &network.BlockPattern{URLPattern: b.base + "/v1/*", Block: true})
	}
	if _, err := chromedp.Call(b.ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: patterns}); err != nil {
		b.t.Fatal(err)
	}
}

// TestDoorOnAPhone: on a touch device of 390 px the door page puts the focus
// in the code field neither at its start nor after the camera's scans (the
// phone's keyboard would open over the camera and the verdict), and every
// button and field is at least 44 px high and wide enough for a thumb; at
// 390 and 1280 px it fits without sideways scrolling and passes axe-core.
func TestDoorOnAPhone(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 2)
	b := newBrowser(t, d.s, d.fakeCamera(t, d.tickets[0]))
	b.viewport(390, 844)
	b.touch() // after the viewport, whose emulation has none
	b.run("open /door", chromedp.Navigate(b.base+"/door"))
	b.waitJS("the set-up form", `!document.getElementById("setup").hidden`)
	b.page("door-phone-setup-390")
	b.small("door, set up, 390 px")
	b.setUpDoor(d.key)
	if string(b.eval(`matchMedia("(pointer: coarse)").matches`)) != "true" {
		t.Fatal("the emulated phone has no coarse pointer")
	}
	focused := func(when string) {
		t.Helper()
		if id := string(b.eval(`document.activeElement.id`)); id == `"code"` {
			t.Errorf("%s the code field has the focus: the phone's keyboard opens over the camera", when)
		}
	}
	focused("at the start")
	b.page("door-phone-ready-390")
	b.small("door, ready, 390 px")

	b.clickButton("Use the camera")
	b.waitJS("the camera's verdict", `document.getElementById("verdict").dataset.kind === "admitted"`)
	focused("after the camera's scan")
	b.waitJS("the same ticket read again", `document.querySelector("#verdict .verdict-detail").textContent.endsWith("just now")`)
	focused("after the camera read it again")
	b.eval(`document.getElementById("verdict").classList.remove("is-fresh")`) // the page, not the verdict, in the pictures
	b.noSidewaysScroll("door, camera, 390 px")
	b.page("door-phone-camera-390")
	b.viewport(1280, 900)
	b.noSidewaysScroll("door, camera, 1280 px")
	b.page("door-phone-camera-1280")
}

// touch makes the page a touch device's: a coarse pointer, touch events.
func (b *browser) touch() {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5}); err != nil {
		b.t.Fatalf("emulating touch: %v", err)
	}
}

// small fails the test for each visible button or field under 44 px high or
// wide: a thumb's target.
func (b *browser) small(where string) {
	b.t.Helper()
	var small []string
	json.Unmarshal(b.eval(`[...document.querySelectorAll("button, input, select, a[href]")]
		.filter(e => e.offsetParent !== null)
		.map(e => [e, e.getBoundingClientRect()])
		.filter(([e, r]) => r.height < 44 || r.width < 44)
		.map(([e, r]) => (e.id || e.textContent.trim() || e.tagName) + " " + Math.round(r.width) + "×" + Math.round(r.height))`), &small)
	for _, s := range small {
		b.t.Errorf("%s: %s px, under 44", where, s)
	}
}
