package testenv

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"
)

// MailParts is an e-mail taken apart: its text and HTML parts (decoded from
// quoted-printable), its images by Content-ID, and every part's media type.
type MailParts struct {
	Text, HTML string
	Images     map[string][]byte // by Content-ID, without the angle brackets
	Types      []string          // every part's media type, depth first
}

// Has reports whether s is in both the text and the HTML part.
func (p MailParts) Has(s string) bool {
	return strings.Contains(p.Text, s) && strings.Contains(p.HTML, s)
}

// ReadMailParts takes a message apart, multipart within multipart; it fails
// t on a part that does not read, or an image that is not base64.
func ReadMailParts(t testing.TB, m *mail.Message) MailParts {
	t.Helper()
	p := MailParts{Images: map[string][]byte{}}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("testenv: the message's Content-Type: %v", err)
	}
	p.read(t, mt, params, textproto.MIMEHeader(m.Header), m.Body)
	return p
}

func (p *MailParts) read(t testing.TB, mediaType string, params map[string]string, header textproto.MIMEHeader, body io.Reader) {
	p.Types = append(p.Types, mediaType)
	if strings.HasPrefix(mediaType, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			part, err := r.NextPart() // decodes quoted-printable
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("testenv: a part of the message: %v", err)
			}
			mt, ps, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
			if err != nil {
				t.Fatalf("testenv: a part's Content-Type: %v", err)
			}
			p.read(t, mt, ps, part.Header, part)
		}
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	switch mediaType {
	case "text/plain":
		p.Text = string(raw)
	case "text/html":
		p.HTML = string(raw)
	case "image/png":
		if enc := header.Get("Content-Transfer-Encoding"); enc != "base64" {
			t.Fatalf("testenv: an image is %q, not base64", enc)
		}
		img, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
		if err != nil {
			t.Fatalf("testenv: an image is no base64: %v", err)
		}
		p.Images[strings.Trim(header.Get("Content-Id"), "<>")] = img
	}
}
