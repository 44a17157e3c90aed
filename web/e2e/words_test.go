package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stagedoor/stagedoor/docs"
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
	var shed atomic.Bool // while set, the events' list is refused as a shedder refuses it
	s := startStackWith(t, stackOptions{
		env: map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "1/1m"},
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/events" && r.Method == http.MethodGet && shed.Load() {
					w.Header().Set("Retry-After", "30")
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"type":"/problems/service-overloaded","title":"Service overloaded","status":503,` +
						`"detail":"the fleet-usage shedder refuses sheddable requests for now (level 1 of 2)","shedder":"fleet-usage","bound":"fleet-usage"}`))
					return
				}
				h.ServeHTTP(w, r)
			})
		},
	})
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

	// A shedder's 503 on the list of events.
	shed.Store(true)
	b.goTo("/events")
	b.waitText("#notice-text", "We're very busy right now")
	b.waitText("#notice-text", "This page tries again by itself")
	b.waitText("#notice-countdown", "Trying again in 0:")
	b.buyerWordsOnly("a shedder's 503", banned)
	b.bothWidths("words-busy")
	if href := b.attr("#notice-text a", "href"); href != "#/help/busy" {
		t.Errorf(`"What this means" leads to %q, want #/help/busy`, href)
	}
	shed.Store(false)

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
	b.signUp("organizer", "Ada", newEmail("ada"))
	b.waitHeading("My events")
	b.goTo("/organizer/events/new")
	b.waitHeading("New event")
	b.fill("Name", "Late Sale")
	b.fill("Venue", "Town Hall")
	starts := time.Now().Add(30 * 24 * time.Hour)
	b.set("Starts at", starts.Format("2006-01-02T15:04"))
	b.set("On sale from", starts.Add(24*time.Hour).Format("2006-01-02T15:04"))
	b.clickButton("Create event")
	b.waitText("#notice-text", "The sale can't open after the show starts.")
	if text := b.text("#notice-text"); strings.Contains(text, "on_sale_at") || strings.Contains(text, "starts_at") {
		t.Errorf("the form's refusal names the API's fields: %q", text)
	}
	b.bothWidths("form-refusal-in-words")
}
