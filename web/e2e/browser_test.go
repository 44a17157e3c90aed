package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's Chromium (scripts/ensure-browser.sh installs it).
const chromiumPath = "/usr/bin/chromium"

// waitFor bounds each wait for something the page should show.
const waitFor = 10 * time.Second

// browser is one headless Chromium with a fresh profile, showing one tab of a
// stack's pages. Its console is watched: an uncaught exception or a
// Content-Security-Policy violation fails the test.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the stack's URL

	mu      sync.Mutex
	console []string // errors the page reported
}

// newBrowser starts Chromium headless with exactly the flags below (and the
// extra ones a test adds) and a profile directory of the test's own, with a
// desktop-sized viewport.
func newBrowser(t *testing.T, s *stack, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s (scripts/ensure-browser.sh installs it): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	opts = append(opts, extra...) // such as a fake camera
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx, base: s.URL}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	go b.watchConsole()
	t.Cleanup(b.checkConsole)
	return b
}

// watchConsole keeps the errors the page reports: exceptions, console.error,
// and the browser's own error log (a CSP violation is one), except failed
// loads: the pages meet 4xx answers on purpose (401 from /v1/me, 402, 429).
func (b *browser) watchConsole() {
	for m, err := range chromedp.Console(b.ctx) {
		if err != nil {
			return
		}
		if m.Type != chromedp.ConsoleError && !m.IsException() {
			continue
		}
		if m.Source == "network" || strings.Contains(m.Text, "Failed to load resource") {
			continue
		}
		b.mu.Lock()
		b.console = append(b.console, m.String())
		b.mu.Unlock()
	}
}

func (b *browser) checkConsole() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		b.t.Errorf("the page reported an error: %s", m)
	}
}

// run runs actions, failing the test on an error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads the front end at a route ("/events").
func (b *browser) open(route string) {
	b.t.Helper()
	b.run("open "+route, chromedp.Navigate(b.base+"/#"+route))
}

// goTo changes the route within the loaded page, as a link would.
func (b *browser) goTo(route string) {
	b.t.Helper()
	b.eval(fmt.Sprintf(`location.hash = %q`, route))
}

// eval evaluates a JavaScript expression (a promise is awaited) and returns its
// value as JSON.
func (b *browser) eval(expr string) json.RawMessage {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", short(expr), err)
	}
	return v
}

// waitJS waits until the JavaScript expression is truthy.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(waitFor))); err != nil {
		b.t.Fatalf("waiting for %s: %v\nthe page shows: %s", what, err, b.text("body"))
	}
}

// waitText waits until the element of the CSS selector contains text.
func (b *browser) waitText(selector, text string) {
	b.t.Helper()
	b.waitJS(fmt.Sprintf("%q in %s", text, selector),
		fmt.Sprintf(`document.querySelector(%q)?.textContent.includes(%q)`, selector, text))
}

// waitHeading waits for the page whose <h1> is title.
func (b *browser) waitHeading(title string) {
	b.t.Helper()
	b.waitJS("the page "+title, fmt.Sprintf(`document.querySelector("main h1")?.textContent === %q`, title))
}

// text is the text of the first element of the CSS selector ("" when none).
func (b *browser) text(selector string) string {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, selector)))
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return v
}

// click clicks the element of the CSS selector, once it is visible.
func (b *browser) click(selector string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("clicking %s: %v\nthe page shows: %s", selector, err, b.text("body"))
	}
}

// clickButton clicks the button whose text is label.
func (b *browser) clickButton(label string) {
	b.t.Helper()
	b.waitJS("a button "+label, fmt.Sprintf(`[...document.querySelectorAll("button")].some(e => e.textContent.trim() === %q && !e.disabled)`, label))
	b.eval(fmt.Sprintf(`[...document.querySelectorAll("button")].find(e => e.textContent.trim() === %q).click()`, label))
}

// fill types text into the field labelled label, as a person would.
func (b *browser) fill(label, text string) {
	b.t.Helper()
	id := b.fieldID(label)
	b.run("typing into "+label, chromedp.SendKeys(chromedp.ID(id), text))
}

// set sets the value of the field labelled label (for inputs that take no
// typing, such as dates), announcing it to the page as typing would.
func (b *browser) set(label, value string) {
	b.t.Helper()
	id := b.fieldID(label)
	b.eval(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q;
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); })()`, id, value))
}

// fieldID is the id of the control labelled label (by its <label for>).
func (b *browser) fieldID(label string) string {
	b.t.Helper()
	b.waitJS("a field "+label, fmt.Sprintf(`[...document.querySelectorAll("label")].some(l => l.textContent.trim() === %q)`, label))
	var id string
	if err := json.Unmarshal(b.eval(fmt.Sprintf(`[...document.querySelectorAll("label")].find(l => l.textContent.trim() === %q).htmlFor`, label)), &id); err != nil || id == "" {
		b.t.Fatalf("no control for the label %q", label)
	}
	return id
}

// key sends keys ("\r", kb.ArrowRight, " ") to the focused element.
func (b *browser) key(keys string) {
	b.t.Helper()
	b.run("pressing keys", chromedp.KeyEvent(keys))
}

// signUpAndLogIn signs an account up through the page's form and waits until
// the page shows it logged in.
func (b *browser) signUp(kind, name, email string) {
	b.t.Helper()
	b.open("/signup")
	b.waitHeading("Sign up")
	if kind == "organizer" {
		b.click("#kind-organizer")
	}
	b.fill("Name", name)
	b.fill("Email", email)
	b.fill("Password", password)
	b.clickButton("Sign up")
	b.waitText("#nav", "Log out")
}

// logIn logs in through the page's form.
func (b *browser) logIn(email string) {
	b.t.Helper()
	b.open("/login")
	b.waitHeading("Log in")
	b.fill("Email", email)
	b.fill("Password", password)
	b.clickButton("Log in")
	b.waitText("#nav", "Log out")
}

// shots is the folder of this run's screenshots: made once, outside the
// repository, and kept so that a person can look at them.
var shots = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "stagedoor-e2e-") })

// screenshot saves the whole page as a PNG and logs its path.
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	dir, err := shots()
	if err != nil {
		b.t.Fatal(err)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", fileName(b.t.Name()), name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// page is what every test does on each page it reaches: a screenshot, and
// axe-core's check that it has no serious or critical accessibility violation.
func (b *browser) page(name string) {
	b.t.Helper()
	b.screenshot(name)
	b.checkAccessibility(name)
}

// axePath is axe-core as npm ci installs it from the repository's package.json.
var axePath = filepath.Join("..", "..", "node_modules", "axe-core", "axe.min.js")

var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(axePath)
	return string(b), err
})

// violation is one rule axe-core found broken, with where.
type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkAccessibility injects axe-core into the page, runs it, and fails the
// test for each violation of impact serious or critical.
func (b *browser) checkAccessibility(name string) {
	b.t.Helper()
	src, err := axeSource()
	if errors.Is(err, os.ErrNotExist) {
		b.t.Fatalf("axe-core is missing (%s): run `npm ci` in the repository's root (make test does it)", axePath)
	} else if err != nil {
		b.t.Fatal(err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		b.t.Fatalf("injecting axe-core: %v", err)
	}
	raw := b.eval(`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
		id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)})))`)
	var found []violation
	if err := json.Unmarshal(raw, &found); err != nil {
		b.t.Fatal(err)
	}
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("axe on %s: %s (%s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
		} else {
			b.t.Logf("axe on %s, %s: %s (%s)", name, v.Impact, v.ID, v.Help)
		}
	}
}

// imageBytes fetches, in the page (with its cookie), the images of the CSS
// selector, as the page shows them.
func (b *browser) imageBytes(selector string) [][]byte {
	b.t.Helper()
	b.waitJS("the images "+selector, fmt.Sprintf(`[...document.querySelectorAll(%q)].every(i => i.complete && i.naturalWidth > 0)`, selector))
	raw := b.eval(fmt.Sprintf(`Promise.all([...document.querySelectorAll(%q)].map(async img => {
		const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
		let s = ""; for (const x of bytes) s += String.fromCharCode(x);
		return btoa(s);
	}))`, selector))
	var encoded []string
	if err := json.Unmarshal(raw, &encoded); err != nil {
		b.t.Fatal(err)
	}
	out := make([][]byte, len(encoded))
	for i, e := range encoded {
		var err error
		if out[i], err = base64.StdEncoding.DecodeString(e); err != nil {
			b.t.Fatal(err)
		}
	}
	return out
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func fileName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// attr is an attribute of the first element of the CSS selector.
func (b *browser) attr(selector, name string) string {
	b.t.Helper()
	var v string
	json.Unmarshal(b.eval(fmt.Sprintf(`document.querySelector(%q)?.getAttribute(%q) ?? ""`, selector, name)), &v)
	return v
}

// viewport resizes the page, as a phone's screen would be, whose scrollbars
// take no room.
func (b *browser) viewport(width, height int64) {
	b.t.Helper()
	b.run("resizing", chromedp.EmulateViewport(width, height))
	if _, err := chromedp.Call(b.ctx, emulation.SetScrollbarsHidden, emulation.SetScrollbarsHiddenParams{Hidden: true}); err != nil {
		b.t.Fatalf("hiding the scrollbars: %v", err)
	}
	b.eval(`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`) // laid out anew
}

// media emulates a CSS media type ("print"; "" for the screen again).
func (b *browser) media(kind string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: kind}); err != nil {
		b.t.Fatalf("emulating %q media: %v", kind, err)
	}
}

// noSidewaysScroll fails the test when the page is wider than the viewport.
func (b *browser) noSidewaysScroll(name string) {
	b.t.Helper()
	var widths struct{ Page, View int }
	json.Unmarshal(b.eval(`({page: document.documentElement.scrollWidth, view: window.innerWidth})`), &widths)
	if widths.Page > widths.View {
		b.t.Errorf("the %s page is %d px wide in a %d px viewport: it scrolls sideways", name, widths.Page, widths.View)
	}
}
