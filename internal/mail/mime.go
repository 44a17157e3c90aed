package mail

import (
	"bytes"
	"encoding/base64"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"
)

// headers are a message's own header fields.
type headers struct {
	from, to, subject string // from and to as net/mail.Address writes them
	date              time.Time
	messageID         string // with its angle brackets
}

// compose writes a message: multipart/alternative of the plain text and the
// HTML, the HTML in a multipart/related with its inline images (referred to
// by cid: URLs) when there are any. Every line ends in CRLF; every part is 7
// bit (quoted-printable, base64), and every header field ASCII (RFC 2047 for
// the rest), so that any SMTP server takes it.
func compose(h headers, text, html []byte, images []inline) ([]byte, error) {
	var b bytes.Buffer
	alt := multipart.NewWriter(&b)
	field(&b, "From", h.from)
	field(&b, "To", h.to)
	field(&b, "Subject", encodeWords(h.subject))
	field(&b, "Date", h.date.Format(time.RFC1123Z))
	field(&b, "Message-ID", h.messageID)
	field(&b, "MIME-Version", "1.0")
	// RFC 3834: a notice made by a program; auto-responders do not answer it.
	field(&b, "Auto-Submitted", "auto-generated")
	field(&b, "Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": alt.Boundary()}))
	b.WriteString("\r\n")

	if err := quotedPart(alt, "text/plain", text); err != nil {
		return nil, err
	}
	if len(images) == 0 {
		if err := quotedPart(alt, "text/html", html); err != nil {
			return nil, err
		}
		return closed(alt, &b)
	}
	var related bytes.Buffer
	rel := multipart.NewWriter(&related)
	if err := quotedPart(rel, "text/html", html); err != nil {
		return nil, err
	}
	for _, img := range images {
		w, err := rel.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {"image/png"},
			"Content-Transfer-Encoding": {"base64"},
			"Content-ID":                {"<" + img.cid + ">"},
			"Content-Disposition":       {mime.FormatMediaType("inline", map[string]string{"filename": img.name})},
		})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(base64Lines(img.png)); err != nil {
			return nil, err
		}
	}
	if err := rel.Close(); err != nil {
		return nil, err
	}
	w, err := alt.CreatePart(textproto.MIMEHeader{"Content-Type": {mime.FormatMediaType("multipart/related",
		map[string]string{"type": "text/html", "boundary": rel.Boundary()})}})
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(related.Bytes()); err != nil {
		return nil, err
	}
	return closed(alt, &b)
}

// closed ends the message's multipart body and returns the message.
func closed(alt *multipart.Writer, b *bytes.Buffer) ([]byte, error) {
	if err := alt.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// quotedPart adds a part of UTF-8 text of mediaType, quoted-printable.
func quotedPart(mw *multipart.Writer, mediaType string, body []byte) error {
	w, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {mediaType + "; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return err
	}
	qp := quotedprintable.NewWriter(w)
	if _, err := qp.Write(body); err != nil {
		return err
	}
	return qp.Close()
}

// base64Lines is b in base64, in lines of 76 characters (RFC 2045).
func base64Lines(b []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(b)
	var out bytes.Buffer
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	out.WriteString(enc + "\r\n")
	return out.Bytes()
}

// field writes one header field, folded at spaces so that lines stay near 78
// characters (RFC 5322). Its value must be ASCII with no line break: the
// callers encode what is not (encodeWords, net/mail.Address).
func field(b *bytes.Buffer, name, value string) {
	line := name + ":"
	for i, word := range strings.Split(value, " ") {
		if i > 0 && len(line)+1+len(word) > 78 {
			b.WriteString(line + "\r\n")
			line = ""
		}
		line += " " + word
	}
	b.WriteString(line + "\r\n")
}

// encodeWords is s as a header's text: as it is when it is printable ASCII,
// else RFC 2047 encoded words (UTF-8, base64), at most 75 characters each,
// split between characters. Text that looks like an encoded word ("=?") is
// encoded too, so that a mail client never decodes what a user typed (an
// event's name) into something else.
func encodeWords(s string) string {
	plain := !strings.Contains(s, "=?")
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= ' ' && s[i] <= '~'
	}
	if plain {
		return s
	}
	const most = 45 // bytes a word: 60 base64 characters, and "=?utf-8?b?" "?="
	var words []string
	for len(s) > 0 {
		n := min(most, len(s))
		for n < len(s) && n > 1 && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}
