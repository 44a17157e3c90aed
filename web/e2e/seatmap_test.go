package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The seat map for thumbs, at 390 px and 1280 px, on an event of 15 rows of
// 20 seats: at first sight it fits the screen (no sideways scrolling, of the
// page or the map); by touch events, the + button and a pinch zoom it until
// seats are 44 px touch targets, and a tap chooses a seat; the basket bar is
// on the screen while choosing; the keyboard still chooses; a tap by a
// reader who is not logged in is answered beside the seat, with "Log in";
// nothing moves while the page loads (layout shift); once held, the bar
// counts down and offers Pay; and the organizer's read-only map has no picker.
func TestSeatMapForThumbs(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createDemoEvent(t)
	buyer := s.signUp(t, "buyer")
	last := ev.Seats[len(ev.Seats)-1]
	s.signUp(t, "buyer").hold(t, ev.ID, last) // held by someone else, for the read-only map
	b := newBrowser(t, s)

	atEachSize(func(name string, width, height int64) {
		t.Run("anonymous at "+name, func(t *testing.T) {
			b.viewport(width, height)
			b.openEvent(ev)
			b.mapFits(t)
			// Nothing moved while the page and its map came (the skeleton, the
			// map's box reserved): layout shift well under Lighthouse's 0.1.
			if cls := b.layoutShift(t); cls >= 0.05 {
				t.Errorf("the event page's layout shifted by %.3f while loading, want under 0.05", cls)
			}
			seat := b.visibleSeat(t)
			b.eval(fmt.Sprintf(`document.querySelector(%q).click()`, `.seat[data-id="`+seat.ID+`"]`))
			b.waitJS("the toast", `!document.querySelector(".seatmap-toast").hidden`)
			if text := b.text(".seatmap-toast"); !contains(text, "Log in as a buyer to choose seats") || !contains(text, "Log in") {
				t.Errorf("the toast says %q", text)
			}
			b.inView(t, ".seatmap-toast", "the toast")
			b.page("seatmap-anonymous-" + name)
		})
	})

	b.logIn(buyer.Email)
	atEachSize(func(name string, width, height int64) {
		t.Run("by touch at "+name, func(t *testing.T) {
			b.touchScreen(width, height)
			b.openEvent(ev)
			b.mapFits(t)
			b.page("seatmap-first-sight-" + name)
			if hint := b.text("#seatmap-help"); !contains(hint, "Pinch") || contains(hint, "arrow keys") {
				t.Errorf("on a touch screen the hint says %q", hint)
			}
			// The map in view, a pinch (fingers moving apart in the box's
			// middle) zooms in: the seats grow. (At 1280 px headless Chromium
			// sends an emulated pinch to its own page zoom, not to the page's
			// touch handlers: there + does it.)
			b.eval(`document.querySelector(".seatmap-frame").scrollIntoView({block: "start"})`)
			before := b.seatWidth(t)
			if width < 800 {
				x, y := b.center(t, ".seatmap-view")
				b.touches(input.DispatchTouchEventTypeTouchStart, [2]float64{x - 20, y}, [2]float64{x + 20, y})
				for d := 30.0; d <= 90; d += 15 {
					b.touches(input.DispatchTouchEventTypeTouchMove, [2]float64{x - d, y}, [2]float64{x + d, y})
				}
				b.touches(input.DispatchTouchEventTypeTouchEnd)
				pinched := b.seatWidth(t)
				if pinched < before*1.5 {
					t.Errorf("a pinch left the seats %.1f px wide, from %.1f", pinched, before)
				}
				// − tapped zooms out again.
				b.tap(b.center(t, `button[aria-label="Zoom out"]`))
				b.waitJS("the map zoomed out", fmt.Sprintf(`document.querySelector(".seat[data-id]").getBoundingClientRect().width < %f`, pinched-1))
			}
			// + tapped zooms in until seats are touch targets.
			b.tap(b.center(t, `button[aria-label="Zoom in"]`))
			b.waitJS("the map zoomed in", fmt.Sprintf(`document.querySelector(".seat[data-id]").getBoundingClientRect().width > %f`, before+1))
			b.tap(b.center(t, `button[aria-label="Zoom in"]`))
			b.waitJS("the map zoomed in", `document.querySelector(".seat[data-id]").getBoundingClientRect().width >= 44`)
			if w := b.seatWidth(t); w < 44 {
				t.Errorf("zoomed in, a seat is %.1f px wide, want at least 44", w)
			}
			b.page("seatmap-zoomed-" + name)
			// A tap on a seat in view chooses it.
			seat := b.visibleSeat(t)
			b.tap(seat.X, seat.Y)
			b.waitJS("the seat chosen", fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-pressed") === "true"`, `.seat[data-id="`+seat.ID+`"]`))
			b.waitText(".summary", "1 seat chosen")
			b.inView(t, ".basket", "the basket bar")
			if got := b.text(".basket button.primary"); !contains(got, "Hold 1 seat") {
				t.Errorf("the basket bar's button says %q", got)
			}
			b.page("seatmap-chosen-" + name)
			b.eval(`document.querySelector(".seatmap-frame").scrollIntoView({block: "start"})`)
			b.tap(b.center(t, ".zoom-fit"))
			b.waitJS("the whole map again", `!document.querySelector(".seatmap-view").classList.contains("zoomed")`)
			b.mapFits(t)
		})

		t.Run("by keyboard at "+name, func(t *testing.T) {
			b.viewport(width, height)
			b.openEvent(ev)
			if hint := b.text("#seatmap-help"); !contains(hint, "arrow keys") {
				t.Errorf("with a keyboard the hint says %q", hint)
			}
			b.eval(`document.querySelector(".seatmap .seat[tabindex='0']").focus()`)
			b.key(kb.ArrowDown)
			b.key(kb.ArrowRight)
			b.key(" ")
			b.waitText(".summary", "1 seat chosen: Stalls, row B, seat 2.")
			b.inView(t, ".basket", "the basket bar")
			// + zooms around the focused seat, which stays in the box.
			b.key("+")
			b.key("+")
			b.key(kb.ArrowRight)
			b.inView(t, ".seat:focus", "the focused seat")
			var inBox bool
			json.Unmarshal(b.eval(`(() => { const s = document.activeElement.getBoundingClientRect(), v = document.querySelector(".seatmap-view").getBoundingClientRect();
				return s.left >= v.left && s.right <= v.right && s.top >= v.top && s.bottom <= v.bottom; })()`), &inBox)
			if !inBox {
				t.Error("zoomed in by keyboard, the focused seat is outside the map's box")
			}
			b.key("0")
			b.mapFits(t)

			// Zoomed in, a mouse drag pans the map and chooses nothing.
			b.eval(`document.querySelector(".seatmap-frame").scrollIntoView({block: "start"})`)
			b.click(`button[aria-label="Zoom in"]`)
			x, y := b.center(t, ".seatmap-view")
			before := b.text(".summary")
			left := b.eval(`document.querySelector(".seat[data-id]").getBoundingClientRect().left`)
			b.mouse(input.DispatchMouseEventTypeMousePressed, x, y)
			for dx := 20.0; dx <= 120; dx += 20 {
				b.mouse(input.DispatchMouseEventTypeMouseMoved, x-dx, y-dx/2)
			}
			b.mouse(input.DispatchMouseEventTypeMouseReleased, x-120, y-60)
			if after := b.eval(`document.querySelector(".seat[data-id]").getBoundingClientRect().left`); string(after) == string(left) {
				t.Error("a mouse drag did not pan the zoomed map")
			}
			if after := b.text(".summary"); after != before {
				t.Errorf("a mouse drag changed the choice: %q, was %q", after, before)
			}
			b.click(".zoom-fit")
			b.mapFits(t)
		})
	})

	t.Run("once held, the basket bar counts down and offers Pay", func(t *testing.T) {
		b.clickPrefix("Hold 1 seat")
		b.waitHeading("Your hold")
		b.openEvent(ev)
		b.waitJS("the countdown", `/\d+:\d\d/.test(document.querySelector(".basket [role=timer]")?.textContent)`)
		b.waitText(".basket-hold", "You hold 1 seat until")
		if href := b.attr(".basket-hold a", "href"); !strings.HasPrefix(href, "#/holds/") {
			t.Errorf("the basket's Pay goes to %q", href)
		}
		b.inView(t, ".basket", "the basket bar")
		b.page("seatmap-held-1280px")
	})

	t.Run("read-only, the organizer's map shows statuses and no picker", func(t *testing.T) {
		var got struct {
			Buttons, Seats, Held int
			Label                string
		}
		json.Unmarshal(b.eval(fmt.Sprintf(`(async () => {
			const { renderSeatMap } = await import("/ui/js/seatmap.js");
			const seats = (await (await fetch("/v1/events/%s/seats")).json()).seats;
			const el = document.createElement("div");
			document.querySelector("main").append(el);
			const map = renderSeatMap(el, { seats, currency: "USD" }, { readOnly: true });
			const r = { buttons: el.querySelectorAll(".seatmap button").length, seats: el.querySelectorAll(".seat[role=img]").length,
				held: el.querySelectorAll(".seat-held").length, label: el.querySelector('.seat[data-id="%s"]').getAttribute("aria-label") };
			map.element.querySelector(".seat").click();
			r.buttons += el.querySelectorAll(".seat-chosen").length;
			return r;
		})()`, ev.ID, last.ID)), &got)
		if got.Buttons != 0 || got.Seats != len(ev.Seats) || got.Held < 1 || got.Label != fmt.Sprintf("%s, row %s, seat %d, held, $%s", last.Section, last.Row, last.Number, map[string]string{"Stalls": "45.00", "Balcony": "25.00"}[last.Section]) {
			t.Errorf("the read-only map has %d buttons or chosen seats, %d of %d seats drawn, %d held, A1 named %q",
				got.Buttons, got.Seats, len(ev.Seats), got.Held, got.Label)
		}
	})
}

// seatOnScreen is a seat's id and the middle of its button on the screen.
type seatOnScreen struct {
	ID   string
	X, Y float64
}

// openEvent loads the event's page afresh and waits for its seat map.
func (b *browser) openEvent(ev event) {
	b.t.Helper()
	b.run("leaving the page", chromedp.Navigate("about:blank"))
	b.open("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitJS("the seat map", `document.querySelectorAll(".seat[data-id]").length > 0`)
	b.eval(`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`)
}

// mapFits checks that the page does not scroll sideways and that the seat map
// is drawn within its box, all of it.
func (b *browser) mapFits(t *testing.T) {
	t.Helper()
	b.noSidewaysScroll("event")
	var m struct {
		ScrollWidth, ClientWidth float64
		MapLeft, MapRight        float64
		BoxLeft, BoxRight        float64
	}
	json.Unmarshal(b.eval(`(() => { const box = document.querySelector(".seatmap-view"), map = box.querySelector(".seatmap").getBoundingClientRect(), r = box.getBoundingClientRect();
		return {scrollWidth: box.scrollWidth, clientWidth: box.clientWidth, mapLeft: map.left, mapRight: map.right, boxLeft: r.left, boxRight: r.right}; })()`), &m)
	if m.ScrollWidth > m.ClientWidth {
		t.Errorf("the seat map's box is %v px wide inside and scrolls %v px", m.ClientWidth, m.ScrollWidth)
	}
	if m.MapLeft < m.BoxLeft-1 || m.MapRight > m.BoxRight+1 {
		t.Errorf("the seat map (%.0f to %.0f) does not fit its box (%.0f to %.0f)", m.MapLeft, m.MapRight, m.BoxLeft, m.BoxRight)
	}
}

// visibleSeat is an available seat whose middle is in the map's box, on the
// screen and not under anything else (the basket bar).
func (b *browser) visibleSeat(t *testing.T) seatOnScreen {
	t.Helper()
	var s seatOnScreen
	json.Unmarshal(b.eval(`(() => {
		const v = document.querySelector(".seatmap-view").getBoundingClientRect();
		for (const e of document.querySelectorAll(".seat-available[data-id]")) {
			const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
			if (x < v.left || x > v.right || y < v.top || y > v.bottom || y < 0 || y > innerHeight) continue;
			if (document.elementFromPoint(x, y)?.closest(".seat") !== e) continue;
			return {id: e.dataset.id, x, y};
		}
		return {};
	})()`), &s)
	if s.ID == "" {
		t.Fatal("no available seat is in view")
	}
	return s
}

// layoutShift is the page's cumulative layout shift so far (shifts not
// caused by input), as Lighthouse counts it.
func (b *browser) layoutShift(t *testing.T) float64 {
	t.Helper()
	var cls float64
	json.Unmarshal(b.eval(`new Promise(done => {
		let cls = 0;
		new PerformanceObserver(list => { for (const e of list.getEntries()) if (!e.hadRecentInput) cls += e.value; })
			.observe({ type: "layout-shift", buffered: true });
		setTimeout(() => done(cls), 100);
	})`), &cls)
	return cls
}

// inView checks that the element of the selector is within the viewport.
func (b *browser) inView(t *testing.T, selector, what string) {
	t.Helper()
	var in bool
	json.Unmarshal(b.eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q)?.getBoundingClientRect();
		return !!r && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; })()`, selector)), &in)
	if !in {
		t.Errorf("%s is not on the screen", what)
	}
}

// seatWidth is the drawn width of the map's first seat.
func (b *browser) seatWidth(t *testing.T) float64 {
	t.Helper()
	var w float64
	json.Unmarshal(b.eval(`document.querySelector(".seat[data-id]").getBoundingClientRect().width`), &w)
	return w
}

// center is the middle of the element of the selector, on the screen.
func (b *browser) center(t *testing.T, selector string) (float64, float64) {
	t.Helper()
	var p struct{ X, Y float64 }
	json.Unmarshal(b.eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, selector)), &p)
	return p.X, p.Y
}

// touchScreen makes the page a phone's or a tablet's of this size: a touch
// screen (pointer: coarse) that honours the page's viewport (b.viewport makes
// it a desktop's again).
func (b *browser) touchScreen(width, height int64) {
	b.t.Helper()
	b.run("a touch screen", chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulateTouch))
	if _, err := chromedp.Call(b.ctx, emulation.SetScrollbarsHidden, emulation.SetScrollbarsHiddenParams{Hidden: true}); err != nil {
		b.t.Fatalf("hiding the scrollbars: %v", err)
	}
}

// touches sends one touch event with the fingers at points (none for the end).
func (b *browser) touches(kind input.DispatchTouchEventType, points ...[2]float64) {
	b.t.Helper()
	tps := make([]*input.TouchPoint, 0, len(points))
	for i, p := range points {
		id := float64(i)
		tps = append(tps, &input.TouchPoint{X: p[0], Y: p[1], ID: &id})
	}
	if _, err := chromedp.Call(b.ctx, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: kind, TouchPoints: tps}); err != nil {
		b.t.Fatalf("touch %s: %v", kind, err)
	}
}

// mouse sends one mouse event at (x, y), the left button pressed (or released).
func (b *browser) mouse(kind input.DispatchMouseEventType, x, y float64) {
	b.t.Helper()
	p := input.DispatchMouseEventParams{Type: kind, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}
	if kind == input.DispatchMouseEventTypeMouseMoved {
		p.ClickCount = 0
	}
	if _, err := chromedp.Call(b.ctx, input.DispatchMouseEvent, p); err != nil {
		b.t.Fatalf("mouse %s: %v", kind, err)
	}
}

// tap touches the screen at (x, y) and lifts the finger.
func (b *browser) tap(x, y float64) {
	b.t.Helper()
	b.touches(input.DispatchTouchEventTypeTouchStart, [2]float64{x, y})
	b.touches(input.DispatchTouchEventTypeTouchEnd)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// atEachSize calls f with a phone's screen size (390×844) and then a
// desktop's (1280×900), each with its name ("390px").
func atEachSize(f func(name string, width, height int64)) {
	for _, size := range []struct{ width, height int64 }{{390, 844}, {1280, 900}} {
		f(fmt.Sprintf("%dpx", size.width), size.width, size.height)
	}
}
