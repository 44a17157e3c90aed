package e2e

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/internal/app"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// developerWords are what a buyer's screen must never say: each limit's name
// (the contract's LimitName enum), the Idempotency-Key, an id, the machinery.
func developerWords(t *testing.T) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"Idempotency", "circuit", "sheddable", "level 1 of 2"}
	for _, v := range doc.Components.Schemas["LimitName"].Value.Enum {
		words = append(words, v.(string))
	}
	return words
}

var uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// buyerWordsOnly fails the test when the page's visible text says any of the
// developer's words, or shows an id.
func (b *browser) buyerWordsOnly(what string, banned []string) {
	b.t.Helper()
	var text string
	json.Unmarshal(b.eval(`document.body.innerText`), &text)
	for _, w := range banned {
		if strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
			b.t.Errorf("%s: the page says %q:\n%s", what, w, text)
		}
	}
	if id := uuidPattern.FindString(text); id != "" {
		b.t.Errorf("%s: the page shows the id %s:\n%s", what, id, text)
	}
}

// helpLink wants the notice's "What this means" to lead to the help page
// about topic, and that page to say something of it.
func (b *browser) helpLink(topic, says string) {
	b.t.Helper()
	if href := b.attr("#notice-text a", "href"); href != "#/help/"+topic {
		b.t.Errorf(`"What this means" leads to %q, want #/help/%s`, href, topic)
	}
	b.goTo("/help/" + topic)
	b.waitText("main", says)
}

// The failing flows a buyer meets speak a buyer's words at both widths: a
// limit's 429 (hold-buyer at 1 a minute), a declined card, a payment service
// that fails, a shedder's 503; none shows a limit's name, an Idempotency-Key,
// an id or the machinery, and "What this means" leads to the help page for
// the situation.
func TestBuyerWordsOnFailingFlows(t *testing.T) {
	s := startStack(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "1/1m"})
	banned := developerWords(t)
	ev, _, b := buyerOnEvent(t, s, "Harbour Lights")

	// A declined card: try another, the seats still held, for how long.
	b.holdInBrowser(ev, ev.seat(t, "Balcony", "B", 3))
	b.payWith("tok_declined")
	b.waitText("#notice-text", "Your card was declined")
	b.waitJS("the time the seats stay held", `/Try another card — your seats are still held for \d+:\d\d\./.test(document.querySelector("#notice-text").textContent)`)
	b.buyerWordsOnly("a declined card", banned)
	b.bothWidths("words-declined")

	// A payment service that fails: nothing charged, tried again by itself.
	b.payWith("tok_error")
	b.waitText("#notice-text", "Payments aren't working")
	b.waitText("#notice-text", "Nothing was charged")
	b.buyerWordsOnly("payment unavailable", banned)
	b.bothWidths("words-payment-unavailable")
	b.clickButton("Stop trying")
	b.waitText("#notice-text", "The payment was stopped")
	b.payWith("tok_declined")
	b.waitText("#notice-text", "Your card was declined")
	b.helpLink("payment", "A declined card")
	b.bothWidths("help-payment")

	// A limit's 429: one hold a minute, so a second hold is refused.
	b.goTo("/events/" + ev.ID)
	b.waitHeading(ev.Name)
	b.waitJS("the seat map", `document.querySelectorAll(".seat").length > 0`)
	b.click(seatSelector(ev.seat(t, "Stalls", "A", 2)))
	b.clickPrefix("Hold 1 seat")
	b.waitText("#notice-text", "Too many tries in a short time")
	b.waitText("#notice-countdown", "Trying again in")
	b.buyerWordsOnly("a limit's 429", banned)
	b.bothWidths("words-rate-limited")
	b.helpLink("busy", "Too many tries")
	b.bothWidths("help-busy")

	// A shedder's 503 on the list of events: a stack of its own whose
	// fleet serves 2 requests a second, flooded with event lists at 40.
	busy := startStackWith(t, stackOptions{env: map[string]string{"STAGEDOOR_FLEET_CAPACITY": "2"}, loops: app.Shedding})
	bb := newBrowser(t, busy)
	bb.open("/help")
	bb.waitHeading("Help")
	stopFlood := flood(t, busy.URL+"/v1/events", 40)
	untilRefused(t, busy.URL+"/v1/events", false) // the fleet's rates known: the flood is being shed
	// The page's own request may still be let in while the shedder's view of
	// the fleet settles (seen in CI): open the list again until it is refused.
	for try := 1; ; try++ {
		bb.goTo("/help")
		bb.waitHeading("Help")
		bb.goTo("/events")
		bb.waitJS("the list, or its refusal", `document.querySelector("#notice-text").textContent.includes("very busy") ||
			document.querySelector("main [role=status]")?.textContent.includes("No upcoming events yet")`)
		if strings.Contains(bb.text("#notice-text"), "very busy") {
			break
		}
		if try == 10 {
			t.Fatal("the list of events was let in 10 times out of 10 during a flood at 20 times the fleet's capacity")
		}
	}
	bb.waitText("#notice-text", "We're very busy right now")
	bb.waitText("#notice-text", "This page tries again by itself")
	bb.waitJS("the countdown", `/Trying again in \d+:\d\d/.test(document.querySelector("#notice-countdown").textContent)`)
	bb.buyerWordsOnly("a shedder's 503", banned)
	bb.bothWidths("words-busy")
	if href := bb.attr("#notice-text a", "href"); href != "#/help/busy" {
		t.Errorf(`"What this means" leads to %q, want #/help/busy`, href)
	}
	// The flood over, the page's own retry gets the list.
	stopFlood()
	bb.waitJS("the list, once the shedder lets it through", `document.querySelector("#notice-text").textContent === ""`)

	// The page itself, asked for by a browser's navigation while a flood of
	// it goes on, is refused in words (a page that reloads itself), not as
	// the problem's JSON.
	stopFlood = flood(t, busy.URL+"/", 40)
	refused := untilRefused(t, busy.URL+"/", true)
	stopFlood()
	for _, want := range []string{"very busy right now", `http-equiv="refresh"`} {
		if !strings.Contains(refused, want) {
			t.Errorf("the refused page lacks %q:\n%s", want, refused)
		}
	}
	if strings.Contains(refused, "sheddable") || strings.Contains(refused, "{") {
		t.Errorf("the refused page shows the machinery:\n%s", refused)
	}

	// The other help pages, and their index.
	for _, topic := range []struct{ name, says string }{{"held-seats", "What a hold is"}, {"waiting-room", "Why there is a queue"}} {
		b.goTo("/help/" + topic.name)
		b.waitText("main", topic.says)
		b.buyerWordsOnly("help "+topic.name, banned)
		b.bothWidths("help-" + topic.name)
	}
	b.goTo("/help")
	b.waitHeading("Help")
	b.waitJS("four topics", fmt.Sprintf(`document.querySelectorAll("main li a[href^='#/help/']").length === %d`, 4))
	b.page("help")
}

// The organizer's form says the API's refusal in the form's words: a sale
// that opens after the show starts is "The sale can't open after the show
// starts", not the fields' names.
func TestOrganizerFormSaysRefusalsInWords(t *testing.T) {
	s := startStack(t, nil)
	b := newBrowser(t, s)
	b.signUpOrganizer("Ada", newEmail("ada"))
	starts := time.Now().Add(30 * 24 * time.Hour)
	b.newEventForm("Late Sale", "Town Hall", starts)
	b.set("On sale from", starts.Add(24*time.Hour).Format("2006-01-02T15:04"))
	b.clickButton("Create event")
	b.waitText("#notice-text", "The sale can't open after the show starts.")
	if text := b.text("#notice-text"); strings.Contains(text, "on_sale_at") || strings.Contains(text, "starts_at") {
		t.Errorf("the form's refusal names the API's fields: %q", text)
	}
	b.bothWidths("form-refusal-in-words")
}

// flood asks for url rate times a second, each request at its tick whatever
// the answers take (an open load), until the returned stop is called.
func flood(t *testing.T, url string, rate int) (stop func()) {
	t.Helper()
	return testenv.OpenLoad(t, rate, func() {
		if resp, err := http.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// untilRefused asks for url (as a browser's navigation when navigate is set)
// until the shedder refuses it (the flood beside it fills the fleet's share),
// and returns the refusal's body; it fails the test on any other refusal, and
// on a navigation refused otherwise than with a page.
func untilRefused(t *testing.T, url string, navigate bool) string {
	t.Helper()
	var refused string
	ask := func() bool {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if navigate {
			req.Header.Set("Sec-Fetch-Mode", "navigate")
			req.Header.Set("Accept", "text/html,application/xhtml+xml")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return true
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
		switch {
		case resp.StatusCode == http.StatusOK:
			return false // served within the share: ask again
		case resp.StatusCode == http.StatusServiceUnavailable && page == navigate:
			refused = html.UnescapeString(string(body))
		default:
			t.Errorf("%s = %d %s: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		return true
	}
	if !testenv.Poll(30*time.Second, 50*time.Millisecond, ask) {
		t.Fatalf("%s was not refused in 30 s of a flood at 20 times the fleet's capacity", url)
	}
	return refused
}
