package mail_test

import (
	"bytes"
	"encoding/json"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/ids"
	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// render writes a notice as the message of kind, and reads it back.
func render(t *testing.T, kind, to string, n stagemail.Notice) (*mail.Message, testenv.MailParts) {
	t.Helper()
	r, err := stagemail.NewRenderer(testFrom, testPublic+"/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.Render(stagemail.Queued{ID: 1, MessageID: ids.New(), Kind: kind, To: to, Notice: body, CreatedAt: time.Now()})
	if err != nil {
		t.Fatalf("render %s: %v", kind, err)
	}
	for i, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 998 {
			t.Fatalf("line %d is %d bytes long", i, len(line))
		}
		for _, c := range []byte(line) {
			if c > '~' || c < ' ' && c != '\t' {
				t.Fatalf("line %d is not 7-bit text: %q", i, line)
			}
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m, testenv.ReadMailParts(t, m)
}

// mustContain fails t unless each of want is in both parts.
func mustContain(t *testing.T, kind string, p testenv.MailParts, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(p.Text, s) {
			t.Errorf("%s: the text part lacks %q", kind, s)
		}
		if !strings.Contains(p.HTML, s) {
			t.Errorf("%s: the HTML part lacks %q", kind, s)
		}
	}
}

// TestEveryNoticeRenders: each kind of message has its subject, its facts in
// both parts (amounts, seats and places, who gave a ticket to whom), its QR
// images and references where it carries codes and none where it must not
// show a code, a link to the tickets page, and only 7-bit lines of at most
// 998 bytes.
func TestEveryNoticeRenders(t *testing.T) {
	t.Parallel()
	ev := stagemail.Event{ID: ids.New(), Name: "Summer Fest", Venue: "Park", StartsAt: time.Date(2031, 7, 1, 16, 0, 0, 0, time.UTC)}
	ga := stagemail.Ticket{ID: ids.New(), Section: "Meadow", Number: 17, GeneralAdmission: true, Code: "GAGAGAGAGAGAGAGAGAGAGAGAGAGAGAGA", Reference: "7KQ4-0M2X-9P"}
	seat := stagemail.Ticket{ID: ids.New(), Section: "Stand", Row: "C", Number: 4, Code: "SEATSEATSEATSEATSEATSEATSEATSEAT", Reference: "ZZ9Z-ZZ9Z-ZZ"}
	ada := stagemail.Recipient{Name: "Ada", Email: "ada@example.com"}
	bob := stagemail.Recipient{Name: "Bob", Email: "bob@example.com"}
	cases := []struct {
		kind, to, subject string
		notice            stagemail.Notice
		want              []string
		images            int
		absent            []string
	}{
		{stagemail.KindOrderConfirmed, ada.Email, "Your tickets for Summer Fest",
			stagemail.OrderConfirmed{To: ada, OrderID: ids.New(), Event: ev, Tickets: []stagemail.Ticket{ga, seat}, TotalCents: 12345, Currency: "USD"},
			[]string{"Hello Ada", "2 tickets", "General admission · Meadow", "Stand, row C, seat 4", "123.45 USD", ga.Code, seat.Code, ga.Reference, seat.Reference}, 2, nil},
		{stagemail.KindRefunded, ada.Email, "Your refund for Summer Fest",
			stagemail.Refunded{To: ada, OrderID: ids.New(), Event: ev, Tickets: []stagemail.Ticket{seat}, AmountCents: 4000, Currency: "EUR"},
			[]string{"40.00 EUR", "Stand, row C, seat 4", "This ticket no longer admits"}, 0, []string{seat.Code, seat.Reference}},
		{stagemail.KindTicketGiven, ada.Email, "You gave your ticket for Summer Fest",
			stagemail.TicketTransferred{From: ada, To: bob, Event: ev, Ticket: seat},
			[]string{"Hello Ada", "Bob (bob@example.com)", "Stand, row C, seat 4", "no longer admits"}, 0, []string{seat.Code, seat.Reference}},
		{stagemail.KindTicketReceived, bob.Email, "Ada gave you a ticket for Summer Fest",
			stagemail.TicketTransferred{From: ada, To: bob, Event: ev, Ticket: seat},
			[]string{"Hello Bob", "Ada (ada@example.com)", "Stand, row C, seat 4", seat.Code, seat.Reference}, 1, nil},
		{stagemail.KindEventCancelled, ada.Email, "Cancelled: Summer Fest",
			stagemail.EventCancelled{To: ada, OrderID: ids.New(), Event: ev, RefundCents: 9900, Currency: "EUR"},
			[]string{"Hello Ada", "cancelled", "99.00 EUR", "no longer admit"}, 0, nil},
	}
	for _, c := range cases {
		m, p := render(t, c.kind, c.to, c.notice)
		if got := decodeHeader(t, m.Header.Get("Subject")); got != c.subject {
			t.Errorf("%s: subject %q; want %q", c.kind, got, c.subject)
		}
		if addr, err := mail.ParseAddress(m.Header.Get("To")); err != nil || addr.Address != c.to {
			t.Errorf("%s: To %q", c.kind, m.Header.Get("To"))
		}
		mustContain(t, c.kind, p, append(c.want, "Summer Fest", "Park", "Tuesday 1 July 2031, 16:00 UTC",
			testPublic+"/#/tickets", testPublic+"/#/events/"+ev.ID)...)
		if len(p.Images) != c.images {
			t.Errorf("%s: %d inline images; want %d", c.kind, len(p.Images), c.images)
		}
		for cid, img := range p.Images {
			if code := testenv.DecodeQR(t, img); !strings.Contains(p.HTML, "cid:"+cid) || !strings.Contains(p.Text, code) {
				t.Errorf("%s: image %s (%s) is not shown in the HTML, or its code is not in the text", c.kind, cid, code)
			}
		}
		for _, s := range c.absent {
			if strings.Contains(p.Text, s) || strings.Contains(p.HTML, s) {
				t.Errorf("%s: shows %q, which it must not", c.kind, s)
			}
		}
	}
}

// TestHostileTextArrivesEscaped: an event, venue and buyer named with HTML,
// a script, an encoded word and non-ASCII letters arrive, through a real SMTP
// server, as that text: escaped in the HTML part (no tag of theirs in it),
// as typed in the plain part, and RFC 2047-encoded in Subject and To, which
// decode to exactly what was typed.
func TestHostileTextArrivesEscaped(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	server := testenv.StartSMTP(t, testenv.SMTPOptions{})
	n := confirmation(buyerEmail())
	n.Event.Name = `<script>alert("pwned")</script> Ünïcode 🎟 =?utf-8?q?spoof?=`
	n.Event.Venue = `<img src=x onerror="alert(1)">Hall & "Co"`
	n.To.Name = `</p><a href="https://evil.example">Mallory</a>`
	n.Tickets[0].Section = `<b>Floor</b>`
	enqueue(t, db, n)
	sendDue(t, newSender(t, db, server, stagemail.Options{}))
	got := server.Received(t)
	if len(got) != 1 {
		t.Fatalf("%d messages arrived; want 1", len(got))
	}
	m := got[0]
	p := testenv.ReadMailParts(t, m)
	for _, hostile := range []string{"<script", "<img src=x", `href="https://evil.example"`, "<b>Floor", "</p><a"} {
		if strings.Contains(p.HTML, hostile) {
			t.Errorf("the HTML part has %q unescaped", hostile)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;", "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Hall &amp; &#34;Co&#34;", "&lt;b&gt;Floor&lt;/b&gt;"} {
		if !strings.Contains(p.HTML, escaped) {
			t.Errorf("the HTML part lacks %q", escaped)
		}
	}
	for _, typed := range []string{n.Event.Name, n.Event.Venue, n.To.Name, "<b>Floor</b>, row A, seat 1"} {
		if !strings.Contains(p.Text, typed) {
			t.Errorf("the text part lacks %q as typed", typed)
		}
	}
	if subject := decodeHeader(t, m.Header.Get("Subject")); subject != "Your tickets for "+n.Event.Name {
		t.Errorf("Subject decodes to %q", subject)
	}
	if raw := m.Header.Get("Subject"); strings.Contains(raw, "<script") || strings.Contains(raw, "=?utf-8?q?spoof?=") {
		t.Errorf("Subject is sent as %q: the name's encoded word is not encoded", raw)
	}
	to, err := mail.ParseAddress(m.Header.Get("To"))
	if err != nil || to.Name != n.To.Name || to.Address != n.To.Email {
		t.Errorf("To %q reads as %+v, %v", m.Header.Get("To"), to, err)
	}
}
