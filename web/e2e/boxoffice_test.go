package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// transfer gives the client's ticket to the buyer with email, through the API.
func (c *client) transfer(t *testing.T, ticketID, email string) {
	t.Helper()
	a, err := c.api.TransferTicketWithResponse(context.Background(), uuid.MustParse(ticketID),
		apiclient.TransferRequest{Email: openapi_types.Email(email)})
	apitest.Expect(t, a, err, 200)
}

// tickets lists the client's tickets through the API.
func (c *client) tickets(t *testing.T) []apiclient.Ticket {
	t.Helper()
	list, err := c.api.ListTicketsWithResponse(context.Background())
	apitest.Expect(t, list, err, 200)
	return list.JSON200.Tickets
}

// A buyer gives one of two tickets to a friend from the tickets page: the
// dialog refuses an email of no account and the buyer's own in words, then
// asks to confirm; afterwards the ticket reads given away, without its code
// or QR code, and the friend, logged in, sees it with a QR code that reads
// the new code. At 1280 and 390 px, axe-clean with the dialog open.
func TestABuyerGivesATicketToAFriend(t *testing.T) {
	s := startStack(t, nil)
	ev := s.signUp(t, "organizer").createEvent(t, "Gift Night", 0)
	friend := s.signUp(t, "buyer")
	b := newBrowser(t, s)
	email := newEmail("giver")
	b.signUp("buyer", "Gia", email)
	giver := s.logIn(t, email)
	giver.buy(t, ev.ID, ev.Seats[:2]...)

	b.goTo("/tickets")
	b.waitJS("two tickets", `document.querySelectorAll(".ticket img.qr").length === 2`)
	b.click(`.ticket button[aria-label^="Give to a friend"]`)
	b.waitJS("the dialog", `document.querySelector("dialog.dialog")?.open === true`)
	b.page("transfer-dialog-1280px")

	ask := func(to string) {
		b.set("Your friend's email", to)
		b.clickButton("Continue")
	}
	ask("nobody-" + email)
	b.waitText("dialog", "Give Stalls, row A, seat")
	b.clickButton("Give the ticket")
	b.waitText(".dialog-error", "No Stagedoor buyer account uses this email")
	b.page("transfer-refused")
	ask(strings.ToUpper(email))
	b.waitText(".dialog-error", "That is your own email")

	ask(friend.Email)
	b.waitText("dialog", "to "+friend.Email+"?")
	b.page("transfer-confirm")
	b.clickButton("Give the ticket")
	b.waitText("#notice-text", "now belongs to "+friend.Email)
	b.waitJS("one QR code left", `document.querySelectorAll(".ticket img.qr").length === 1 && !document.querySelector("dialog")`)
	b.waitText(".ticket-void", "Given away")
	if strings.Contains(b.text(".ticket-void"), "Code:") || b.text(`.ticket-void button`) != "" {
		t.Errorf("the ticket given away shows a code or a button: %q", b.text(".ticket-void"))
	}
	b.page("tickets-after-transfer-1280px")

	var received string
	for _, tk := range friend.tickets(t) {
		if tk.Status == "valid" && tk.Code != nil {
			received = *tk.Code
		}
	}
	if received == "" || len(giver.ticketCodes(t)) != 1 {
		t.Fatalf("after the transfer the friend holds %q and the giver %d codes", received, len(giver.ticketCodes(t)))
	}
	b.viewport(390, 844)
	b.clickButton("Log out")
	b.waitText("#nav", "Log in")
	b.logIn(friend.Email)
	b.goTo("/tickets")
	b.waitJS("the ticket received", `document.querySelectorAll(".ticket img.qr").length === 1`)
	if got := testenv.DecodeQR(t, b.imageBytes("img.qr")[0]); got != received {
		t.Errorf("the friend's QR code reads %q, want the new code %q", got, received)
	}
	b.noSidewaysScroll("tickets")
	b.page("tickets-received-390px")
	b.click(`.ticket button[aria-label^="Give to a friend"]`)
	b.waitJS("the dialog", `document.querySelector("dialog.dialog")?.open === true`)
	b.noSidewaysScroll("transfer dialog")
	b.page("transfer-dialog-390px")
	b.clickButton("Cancel")
	b.waitJS("the dialog closed, focus back on its button", `!document.querySelector("dialog") &&
		document.activeElement?.getAttribute("aria-label")?.startsWith("Give to a friend")`)
}

// An organizer reads an event's orders in pages of 50, newest first, with
// each buyer's email, the tickets by seat (one given away and who holds it
// now) and the total, and downloads the attendee list, whose formula-like
// cells are neutralised. At 1280 and 390 px.
func TestTheOrganizerReadsOrdersAndExportsAttendees(t *testing.T) {
	s := startStack(t, map[string]string{"STAGEDOOR_LIMIT_HOLD_BUYER": "1000/1s", "STAGEDOOR_LIMIT_CHECKOUT_BUYER": "1000/1s"})
	b := newBrowser(t, s)
	email := newEmail("boxoffice")
	b.signUp("organizer", "Box Office", email)
	ev := s.logIn(t, email).makeEvent(t, apiclient.EventRequest{Name: "Orders Night", Venue: "Test Hall",
		StartsAt: time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second),
		Sections: []apiclient.SectionRequest{apiclient.SeatedSection("Stalls", 3, 20, 4500)}})
	formula := s.signUpAs(t, "buyer", fmt.Sprintf("=cmd%s", newEmail("x")))
	friend := s.signUp(t, "buyer")
	many := s.signUp(t, "buyer")
	for _, st := range ev.Seats[2:52] { // 50 orders of one seat, the older ones
		many.buy(t, ev.ID, st)
	}
	formula.buy(t, ev.ID, ev.Seats[0], ev.Seats[1]) // the newest
	var given string
	for _, tk := range formula.tickets(t) {
		given = tk.Id.String()
		break
	}
	formula.transfer(t, given, friend.Email)

	b.run("reloading", chromedp.Reload()) // signing up showed My events before the event was made
	b.waitText("main table", "Orders Night")
	b.click(`a[aria-label="Orders of Orders Night"]`)
	b.waitHeading("Orders of Orders Night")
	b.waitText("[role=status]", "50 orders shown; older ones follow.")
	first := b.text("tbody tr")
	if !strings.Contains(first, formula.Email) || !strings.Contains(first, "Given away") ||
		!strings.Contains(first, "Valid, held by "+friend.Email) || !strings.Contains(first, "$90.00") || !strings.Contains(first, "Paid") {
		t.Errorf("the newest order reads %q", first)
	}
	b.page("orders-1280px")
	b.clickButton("Older orders")
	b.waitText("[role=status]", "51 orders shown.")
	b.waitJS("no older orders offered on the last page",
		`[...document.querySelectorAll("button")].find(e => e.textContent.trim() === "Older orders").hidden`)

	var csv struct {
		Type, Disposition, Body string
	}
	raw := b.eval(`(async () => {
		const a = [...document.querySelectorAll("a")].find(a => a.textContent.trim() === "Export attendees (CSV)");
		const r = await fetch(a.href);
		return {type: r.headers.get("Content-Type"), disposition: r.headers.get("Content-Disposition"), body: await r.text(), download: a.hasAttribute("download")};
	})()`)
	if err := json.Unmarshal(raw, &csv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.Body), "\n")
	if csv.Type != "text/csv; charset=utf-8" || !strings.HasPrefix(csv.Disposition, "attachment;") || len(lines) != 1+52 ||
		lines[0] != "ticket_id,order_id,email,section,row,seat,status,scanned_at" ||
		!strings.Contains(csv.Body, ",'"+formula.Email+",Stalls,A,") || !strings.Contains(csv.Body, ","+friend.Email+",Stalls,A,") {
		t.Errorf("the attendee list: %s, %s, %d lines:\n%.600s", csv.Type, csv.Disposition, len(lines), csv.Body)
	}

	b.viewport(390, 844)
	b.goTo("/organizer")
	b.waitText("main table", "Orders Night")
	b.goTo("/organizer/events/" + ev.ID + "/orders")
	b.waitText("[role=status]", "50 orders shown")
	b.noSidewaysScroll("orders")
	b.page("orders-390px")
}
