package mail_test

import (
	"mime"
	"strings"
	"testing"

	stagemail "github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAConfirmationArrivesWithBothPartsAndItsQRCodes: an order's
// confirmation, sent to a real SMTP server, arrives once with its headers,
// a plain-text and an HTML part, and each ticket's QR image inline (the HTML
// refers to each by its cid:), each image reading as its ticket's code.
func TestAConfirmationArrivesWithBothPartsAndItsQRCodes(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	server := testenv.StartSMTP(t, testenv.SMTPOptions{})
	to := buyerEmail()
	n := confirmation(to)
	enqueue(t, db, n)
	if p := sendDue(t, newSender(t, db, server, stagemail.Options{})); p.Sent != 1 || p.Backlog != 0 {
		t.Fatalf("pass = %+v; want 1 sent, none left", p)
	}
	got := server.Received(t)
	if len(got) != 1 {
		t.Fatalf("%d messages arrived; want 1", len(got))
	}
	m := got[0]
	h := m.Header
	if h.Get("X-RcptTo") != to || h.Get("X-MailFrom") != "tickets@stagedoor.test" {
		t.Errorf("envelope: from %q to %q", h.Get("X-MailFrom"), h.Get("X-RcptTo"))
	}
	if h.Get("From") != `"Stagedoor" <tickets@stagedoor.test>` || h.Get("To") != `"Ada Lovelace" <`+to+`>` {
		t.Errorf("From %q, To %q", h.Get("From"), h.Get("To"))
	}
	if subject := decodeHeader(t, h.Get("Subject")); subject != "Your tickets for Night at the Opera" {
		t.Errorf("Subject %q", subject)
	}
	if id := h.Get("Message-Id"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@stagedoor.test>") {
		t.Errorf("Message-ID %q", id)
	}
	if _, err := h.Date(); err != nil {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	p := testenv.ReadMailParts(t, m)
	want := []string{"multipart/alternative", "text/plain", "multipart/related", "text/html", "image/png", "image/png"}
	if strings.Join(p.Types, " ") != strings.Join(want, " ") {
		t.Errorf("parts %v; want %v", p.Types, want)
	}
	for i, tk := range n.Tickets {
		if !strings.Contains(p.Text, tk.Code) || !strings.Contains(p.HTML, tk.Code) {
			t.Errorf("ticket %d's code is not in both parts", i)
		}
		var cid string
		for id, img := range p.Images {
			if testenv.DecodeQR(t, img) == tk.Code {
				cid = id
			}
		}
		if cid == "" || !strings.Contains(p.HTML, `src="cid:`+cid+`"`) {
			t.Errorf("ticket %d: no inline image reads as its code, or the HTML does not show it (cid %q)", i, cid)
		}
	}
	for _, s := range []string{"Floor, row A, seat 1", "50.00 EUR", "Royal Hall", "Saturday 14 June 2031, 19:30 UTC", testPublic + "/#/tickets"} {
		if !strings.Contains(p.Text, s) || !strings.Contains(p.HTML, s) {
			t.Errorf("%q is not in both parts", s)
		}
	}
}

// decodeHeader decodes a header's RFC 2047 words.
func decodeHeader(t *testing.T, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatalf("header %q: %v", v, err)
	}
	return s
}
