package mail

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/mail"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/stagedoor/stagedoor/internal/ticketqr"
)

//go:embed templates
var templateFiles embed.FS

// Renderer writes outbox messages as e-mail: headers, a plain-text part and
// an HTML part (html/template: every value escaped), the tickets' QR images
// inline. It reads nothing but the message: the notice holds all it shows.
type Renderer struct {
	from   mail.Address
	domain string // of From: the Message-IDs' right part
	public string // STAGEDOOR_PUBLIC_URL, without a trailing slash
	text   map[string]*texttemplate.Template
	html   map[string]*htmltemplate.Template
}

// kinds are the kinds of message and how to read each one's notice.
var kinds = map[string]func(json.RawMessage) (letterView, error){
	KindOrderConfirmed: decodeAs(func(n OrderConfirmed) letterView {
		return letterView{notice: n, to: n.To, event: n.Event, coded: n.Tickets}
	}),
	KindRefunded: decodeAs(func(n Refunded) letterView {
		return letterView{notice: n, to: n.To, event: n.Event}
	}),
	KindTicketGiven: decodeAs(func(n TicketTransferred) letterView {
		return letterView{notice: n, to: n.From, event: n.Event}
	}),
	KindTicketReceived: decodeAs(func(n TicketTransferred) letterView {
		return letterView{notice: n, to: n.To, event: n.Event, coded: []Ticket{n.Ticket}}
	}),
	KindEventCancelled: decodeAs(func(n EventCancelled) letterView {
		return letterView{notice: n, to: n.To, event: n.Event}
	}),
}

// letterView is what a kind's message needs of its notice: the notice, its
// recipient, its event, and the tickets whose QR images it carries.
type letterView struct {
	notice any
	to     Recipient
	event  Event
	coded  []Ticket
}

func decodeAs[N any](view func(N) letterView) func(json.RawMessage) (letterView, error) {
	return func(raw json.RawMessage) (letterView, error) {
		var n N
		if err := json.Unmarshal(raw, &n); err != nil {
			return letterView{}, err
		}
		return view(n), nil
	}
}

// NewRenderer returns a Renderer of messages from from (STAGEDOOR_MAIL_FROM:
// an address, with a name or not) whose links lead to publicURL
// (STAGEDOOR_PUBLIC_URL, an http or https URL).
func NewRenderer(from, publicURL string) (*Renderer, error) {
	addr, err := ParseFrom(from)
	if err != nil {
		return nil, err
	}
	if err := CheckPublicURL(publicURL); err != nil {
		return nil, err
	}
	r := &Renderer{from: *addr, domain: addr.Address[strings.LastIndexByte(addr.Address, '@')+1:],
		public: strings.TrimRight(publicURL, "/"),
		text:   map[string]*texttemplate.Template{}, html: map[string]*htmltemplate.Template{}}
	for kind := range kinds {
		if r.text[kind], err = texttemplate.New(kind).Funcs(textFuncs).
			ParseFS(templateFiles, "templates/layout.txt", "templates/"+kind+".txt"); err != nil {
			return nil, fmt.Errorf("mail: template %s: %w", kind, err)
		}
		if r.html[kind], err = htmltemplate.New(kind).Funcs(htmlFuncs).
			ParseFS(templateFiles, "templates/layout.html", "templates/"+kind+".html"); err != nil {
			return nil, fmt.Errorf("mail: template %s: %w", kind, err)
		}
	}
	return r, nil
}

// ParseFrom reads STAGEDOOR_MAIL_FROM: one address, such as
// "Stagedoor <tickets@example.com>" or tickets@example.com.
func ParseFrom(from string) (*mail.Address, error) {
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("must be one e-mail address, such as Stagedoor <tickets@example.com> (%v)", err)
	}
	if at := strings.LastIndexByte(addr.Address, '@'); at <= 0 || at == len(addr.Address)-1 {
		return nil, errors.New("must be one e-mail address with a domain, such as tickets@example.com")
	}
	return addr, nil
}

// CheckPublicURL checks STAGEDOOR_PUBLIC_URL: http or https, a host, no
// user, query or fragment (the messages add their own paths).
func CheckPublicURL(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return errors.New("must be an http:// or https:// URL, such as https://tickets.example.com")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return errors.New("must be an http:// or https:// URL with a host, such as https://tickets.example.com")
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("must have no query, fragment or user: the links add their own paths")
	}
	return nil
}

// view is what the templates see.
type view struct {
	N       any    // the notice: OrderConfirmed, Refunded, TicketTransferred or EventCancelled
	Subject string // for the HTML's title
	Links   struct{ Tickets, Event string }
}

// inline is an image of the HTML part.
type inline struct {
	cid  string // its Content-ID, without the angle brackets
	name string // its file name
	png  []byte
}

// Render writes m as an RFC 5322 message, or says why it cannot be written
// (an unknown kind, a notice that does not read, no usable address): such a
// message will never be sent, and the Sender gives it up.
func (r *Renderer) Render(m Queued) ([]byte, error) {
	decode, ok := kinds[m.Kind]
	if !ok {
		return nil, fmt.Errorf("no message of kind %q", m.Kind)
	}
	lv, err := decode(m.Notice)
	if err != nil {
		return nil, fmt.Errorf("the notice does not read: %w", err)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("the recipient is no address: %w", err)
	}
	to.Name = lv.to.Name
	images, cids, err := r.qrImages(m.MessageID, lv.coded)
	if err != nil {
		return nil, err
	}
	v := view{N: lv.notice}
	v.Links.Tickets = r.public + "/#/tickets"
	v.Links.Event = r.public + "/#/events/" + url.PathEscape(lv.event.ID)

	var subject, text, html bytes.Buffer
	tt := r.text[m.Kind]
	if err := tt.ExecuteTemplate(&subject, "subject", v); err != nil {
		return nil, err
	}
	v.Subject = strings.Join(strings.Fields(subject.String()), " ")
	if err := tt.ExecuteTemplate(&text, "layout", v); err != nil {
		return nil, err
	}
	ht, err := r.html[m.Kind].Clone()
	if err != nil {
		return nil, err
	}
	ht.Funcs(htmltemplate.FuncMap{"qr": func(t Ticket) htmltemplate.URL { return cids[t.ID] }})
	if err := ht.ExecuteTemplate(&html, "layout", v); err != nil {
		return nil, err
	}
	return compose(headers{
		from: r.from.String(), to: to.String(), subject: v.Subject, date: m.CreatedAt,
		messageID: "<" + m.MessageID + "@" + r.domain + ">",
	}, text.Bytes(), html.Bytes(), images)
}

// qrImages draws the QR image of each coded ticket, and says the cid: URL of
// each by ticket id.
func (r *Renderer) qrImages(messageID string, tickets []Ticket) ([]inline, map[string]htmltemplate.URL, error) {
	var images []inline
	cids := map[string]htmltemplate.URL{}
	for i, t := range tickets {
		if t.Code == "" {
			continue
		}
		img, err := ticketqr.PNG(t.Code)
		if err != nil {
			return nil, nil, fmt.Errorf("the QR code of ticket %s: %w", t.ID, err)
		}
		cid := fmt.Sprintf("qr%d.%s@%s", i+1, messageID, r.domain)
		images = append(images, inline{cid: cid, name: fmt.Sprintf("ticket-%d.png", i+1), png: img})
		cids[t.ID] = htmltemplate.URL("cid:" + cid)
	}
	return images, cids, nil
}

// The templates' functions; the HTML's escape what they return like any value.
var (
	funcs = map[string]any{
		"money": money,
		"when":  func(t time.Time) string { return t.UTC().Format("Monday 2 January 2006, 15:04 UTC") },
		"place": place,
		"count": func(n int, one, many string) string {
			if n == 1 {
				return "1 " + one
			}
			return fmt.Sprintf("%d %s", n, many)
		},
		// uncoded is a ticket without its code and reference: shown to who
		// no longer holds it.
		"uncoded": func(t Ticket) Ticket { t.Code, t.Reference = "", ""; return t },
	}
	textFuncs = texttemplate.FuncMap(funcs)
	htmlFuncs = htmltemplate.FuncMap(withQR(funcs))
)

// withQR adds the html templates' qr function, which each Render replaces
// with the message's own (a ticket's cid: URL, or nothing).
func withQR(f map[string]any) map[string]any {
	out := map[string]any{"qr": func(Ticket) htmltemplate.URL { return "" }}
	for k, v := range f {
		out[k] = v
	}
	return out
}

// money writes an amount in cents of currency: "25.00 EUR".
func money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, cents/100, cents%100, currency)
}

// place says where a ticket admits: its seat, or its section of general
// admission.
func place(t Ticket) string {
	switch {
	case t.GeneralAdmission:
		return "General admission · " + t.Section
	case t.Row == "":
		return fmt.Sprintf("%s, seat %d", t.Section, t.Number)
	}
	return fmt.Sprintf("%s, row %s, seat %d", t.Section, t.Row, t.Number)
}
