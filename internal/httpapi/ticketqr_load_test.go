package httpapi_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// ticketsOf buys n seats of the shop's event for buyer, in one order, and
// returns the tickets.
func ticketsOf(t *testing.T, s *shop, buyer testAccount, n int) []apiclient.Ticket {
	t.Helper()
	return s.buy(t, buyer, s.seats[:n]...).Tickets
}

// TestTheTicketsPageLoadsEveryQRCodeAtOnce: a buyer's browser loads the QR
// images of 8 tickets at once while the buyer already has buyer-concurrency's
// 5 requests in flight: every image is served, none refused with 429, since
// an image that never changes is not counted in flight.
func TestTheTicketsPageLoadsEveryQRCodeAtOnce(t *testing.T) {
	t.Parallel()
	const images = 8
	s := newShop(t, 0, "STAGEDOOR_LIMIT_BUYER_CONCURRENCY", "5")
	buyer := newAccount(t, s.testServer, auth.Buyer)
	tickets := ticketsOf(t, s, buyer, images)

	// The buyer's five places are taken (five requests of theirs in flight).
	for range 5 {
		d, release := s.BuyerConcurrency.Enter(context.Background(), buyer.id)
		if !d.Allowed {
			t.Fatalf("lease refused: %+v", d)
		}
		defer release()
	}
	if a := s.request(t, "GET", "/v1/tickets", "", buyer.bearer()...); a.StatusCode != 429 || !a.problem(t).is("too-many-concurrent-requests") {
		t.Fatalf("the ticket list with 5 in flight = %d %s, want 429: the buyer is not at the maximum", a.StatusCode, a.raw)
	}

	got := make([]answer, images)
	var wg sync.WaitGroup
	for i, tk := range tickets {
		wg.Go(func() { got[i] = s.request(t, "GET", "/v1/tickets/"+tk.Id.String()+"/qr", "", buyer.bearer()...) })
	}
	wg.Wait()
	for i, a := range got {
		if a.StatusCode != 200 || a.Header.Get("Content-Type") != "image/png" {
			t.Errorf("QR image %d of %d = %d %.200s, want 200 image/png", i+1, images, a.StatusCode, a.raw)
			continue
		}
		if code := testenv.DecodeQR(t, a.raw); code != *tickets[i].Code {
			t.Errorf("QR image %d reads %q, want %q", i+1, code, *tickets[i].Code)
		}
	}
}

// TestTicketQRRevalidates: a QR image has an ETag and may be kept a day
// (private); If-None-Match with its tag is 304 with no body, another ticket's
// tag gets the image, and another buyer gets 404 whatever tag they send.
func TestTicketQRRevalidates(t *testing.T) {
	t.Parallel()
	s := newShop(t, 0)
	buyer, other := newAccount(t, s.testServer, auth.Buyer), newAccount(t, s.testServer, auth.Buyer)
	tickets := ticketsOf(t, s, buyer, 2)
	qr := func(who testAccount, id string, header ...string) answer {
		return s.request(t, "GET", "/v1/tickets/"+id+"/qr", "", append(who.bearer(), header...)...)
	}

	first := qr(buyer, tickets[0].Id.String())
	tag := first.Header.Get("ETag")
	if first.StatusCode != 200 || tag == "" || first.Header.Get("Cache-Control") != "private, max-age=86400, immutable" {
		t.Fatalf("QR = %d, ETag %q, Cache-Control %q", first.StatusCode, tag, first.Header.Get("Cache-Control"))
	}
	for _, inm := range []string{tag, "W/" + tag, `"something-else", ` + tag} {
		a := qr(buyer, tickets[0].Id.String(), "If-None-Match", inm)
		if a.StatusCode != 304 || len(a.raw) != 0 || a.Header.Get("ETag") != tag {
			t.Errorf("If-None-Match %s = %d, %d bytes, ETag %q; want 304 with no body", inm, a.StatusCode, len(a.raw), a.Header.Get("ETag"))
		}
	}
	second := qr(buyer, tickets[1].Id.String(), "If-None-Match", tag)
	if second.StatusCode != 200 || second.Header.Get("ETag") == tag || testenv.DecodeQR(t, second.raw) != *tickets[1].Code {
		t.Errorf("the other ticket with the first one's tag = %d, ETag %q: want its own image", second.StatusCode, second.Header.Get("ETag"))
	}
	if a := qr(other, tickets[0].Id.String(), "If-None-Match", tag); a.StatusCode != 404 {
		t.Errorf("another buyer with the tag = %d, want 404", a.StatusCode)
	}
}
