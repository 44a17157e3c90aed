package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// transferBody is a transfer's request body.
func transferBody(email string) string { return fmt.Sprintf(`{"email":%q}`, email) }

// ticketIn returns the ticket of list with this id (a zero one when none).
func ticketIn(list []apiclient.Ticket, id string) apiclient.Ticket {
	for _, tk := range list {
		if tk.Id.String() == id {
			return tk
		}
	}
	return apiclient.Ticket{}
}

// TestATransferredTicketAdmitsOnlyItsNewHolder: a buyer gives one of two
// tickets to a friend (her email typed in capitals). The giver's answer and
// list read transferred without a code, and its QR image is gone; the friend
// lists a new ticket of the same seat and event whose QR image reads its new
// code. At the door the old code is 409 revoked and on the revocations list,
// and the new one admits once. The money invariant holds.
func TestATransferredTicketAdmitsOnlyItsNewHolder(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	ada, bea := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	order := s.buy(t, ada, s.seats[0], s.seats[1])
	gift := order.Tickets[0]
	_, door := newScannerKey(t, s.testServer, s.org, s.event)

	a := s.request(t, "POST", "/v1/tickets/"+gift.Id.String()+"/transfer", transferBody(strings.ToUpper(bea.email)), ada.bearer()...)
	if got := as[apiclient.Ticket](t, a); a.StatusCode != 200 || got.Id != gift.Id || got.Status != "transferred" || got.Code != nil ||
		strings.Contains(string(a.raw), `"code"`) {
		t.Fatalf("transfer = %d %s, want 200 with the ticket transferred and no code", a.StatusCode, a.raw)
	}
	mine := as[ticketList](t, s.request(t, "GET", "/v1/tickets", "", ada.bearer()...)).Tickets
	if gave, kept := ticketIn(mine, gift.Id.String()), ticketIn(mine, order.Tickets[1].Id.String()); len(mine) != 2 ||
		gave.Status != "transferred" || gave.Code != nil || kept.Status != "valid" || deref(kept.Code) != deref(order.Tickets[1].Code) {
		t.Errorf("the giver's tickets = %+v, want %s transferred without its code", mine, gift.Id.String())
	}
	if a := s.request(t, "GET", "/v1/tickets/"+gift.Id.String()+"/qr", "", ada.bearer()...); a.StatusCode != 404 {
		t.Errorf("the QR of the ticket given away = %d, want 404", a.StatusCode)
	}
	theirs := as[ticketList](t, s.request(t, "GET", "/v1/tickets", "", bea.bearer()...)).Tickets
	if len(theirs) != 1 || theirs[0].Id == gift.Id || theirs[0].SeatId != gift.SeatId || theirs[0].EventId.String() != s.event ||
		theirs[0].Status != "valid" || theirs[0].Code == nil || deref(theirs[0].Code) == deref(gift.Code) {
		t.Fatalf("the receiver's tickets = %+v, want a new valid one of seat %s", theirs, gift.SeatId.String())
	}
	received := theirs[0]
	if a := s.request(t, "GET", "/v1/tickets/"+received.Id.String()+"/qr", "", bea.bearer()...); a.StatusCode != 200 || testenv.DecodeQR(t, a.raw) != *received.Code {
		t.Errorf("the receiver's QR = %d, want its new code", a.StatusCode)
	}

	wantRejected(t, "a scan of the code given away", s.scanTB(t, door, *gift.Code), 409, "revoked")
	revoked := as[struct {
		Revocations []struct {
			TicketID string `json:"ticket_id"`
		} `json:"revocations"`
	}](t, s.request(t, "GET", "/v1/scanner/revocations", "", "X-Api-Key", door))
	if len(revoked.Revocations) != 1 || revoked.Revocations[0].TicketID != gift.Id.String() {
		t.Errorf("the door's revocations = %+v, want the ticket given away", revoked)
	}
	if a := s.scanTB(t, door, *received.Code); a.StatusCode != 200 || as[admissionJSON](t, a).TicketID != received.Id.String() {
		t.Errorf("a scan of the new code = %d %s, want admitted", a.StatusCode, a.raw)
	}
	wantRejected(t, "a second scan of the new code", s.scanTB(t, door, *received.Code), 409, "already_scanned")
	s.noViolations(t)
}

// TestTransferRefusals: each refusal is its problem and changes nothing; an
// unknown email and an organizer's are the same 404 (signing up with the
// organizer's says more: 409 email-taken); every attempt spends a
// transfer-buyer token, the refused ones too, until 429.
func TestTransferRefusals(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0, "STAGEDOOR_LIMIT_TRANSFER_BUYER", "9/1h burst 9")
	ada, bea := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	order := s.buy(t, ada, s.seats[0], s.seats[1], s.seats[2])
	valid, scanned, given := order.Tickets[0], order.Tickets[1], order.Tickets[2]
	_, door := newScannerKey(t, s.testServer, s.org, s.event)
	if a := s.scanTB(t, door, *scanned.Code); a.StatusCode != 200 {
		t.Fatalf("scan = %d %s", a.StatusCode, a.raw)
	}
	transfer := func(ticketID, email string) answer {
		return s.request(t, "POST", "/v1/tickets/"+ticketID+"/transfer", transferBody(email), ada.bearer()...)
	}
	if a := transfer(given.Id.String(), bea.email); a.StatusCode != 200 {
		t.Fatalf("transfer = %d %s", a.StatusCode, a.raw)
	}
	nobody := "nobody-" + ids.New() + "@example.com"
	for _, c := range []struct {
		name, ticket, email string
		status              int
		slug, ticketStatus  string
	}{
		{"another buyer's ticket", valid.Id.String(), bea.email, 404, "not-found", ""},
		{"an email of no account", valid.Id.String(), nobody, 404, "recipient-not-found", ""},
		{"an organizer's email", valid.Id.String(), s.org.email, 404, "recipient-not-found", ""},
		{"the holder's own email", valid.Id.String(), strings.ToUpper(ada.email), 400, "invalid-request", ""},
		{"a malformed email", valid.Id.String(), "bea at example", 400, "invalid-request", ""},
		{"a scanned ticket", scanned.Id.String(), bea.email, 409, "ticket-not-transferable", "scanned"},
		{"a ticket given away", given.Id.String(), bea.email, 409, "ticket-not-transferable", "transferred"},
	} {
		var a answer
		if c.name == "another buyer's ticket" {
			a = s.request(t, "POST", "/v1/tickets/"+c.ticket+"/transfer", transferBody(ada.email), bea.bearer()...)
		} else {
			a = transfer(c.ticket, c.email)
		}
		p := a.problem(t)
		if a.StatusCode != c.status || !p.is(c.slug) || p.TicketStatus != c.ticketStatus {
			t.Errorf("%s = %d %s, want %d %s %s", c.name, a.StatusCode, a.raw, c.status, c.slug, c.ticketStatus)
		}
	}
	unknown, organizer := transfer(valid.Id.String(), nobody).problem(t), transfer(valid.Id.String(), s.org.email).problem(t)
	if unknown.Detail != organizer.Detail || unknown.Title != organizer.Title {
		t.Errorf("an unknown email (%+v) and an organizer's (%+v) are told apart", unknown, organizer)
	}
	if a := s.request(t, "POST", "/v1/buyers", fmt.Sprintf(`{"email":%q,"password":"correct horse","name":"X"}`, s.org.email)); a.StatusCode != 409 || !a.problem(t).is("email-taken") {
		t.Errorf("signing up with the organizer's email = %d %s, want 409 email-taken", a.StatusCode, a.raw)
	}
	mine := as[ticketList](t, s.request(t, "GET", "/v1/tickets", "", ada.bearer()...)).Tickets
	if tk := ticketIn(mine, valid.Id.String()); tk.Status != "valid" || deref(tk.Code) != deref(valid.Code) {
		t.Errorf("the valid ticket after the refusals = %+v", tk)
	}
	// Ada has made 9 attempts (one transfer, six refused by her, two more):
	// the bucket is empty.
	a := transfer(valid.Id.String(), bea.email)
	if p := a.problem(t); a.StatusCode != 429 || !p.is("rate-limited") || p.Limit != "transfer-buyer" {
		t.Errorf("the tenth transfer = %d %s, want 429 transfer-buyer", a.StatusCode, a.raw)
	}
	s.noViolations(t)
}
