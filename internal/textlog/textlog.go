// Package textlog is a slog.Handler for a person at a terminal (make run):
// one short line an event, the time of day first, the level only when it is
// not INFO, then the message and its attributes as key=value:
//
//	07:52:01 listening addr=127.0.0.1:8080
//	07:52:04 WARN dependency unavailable dependency=redis failures=1 error="dial tcp …: connection refused"
//	07:52:05 GET /v1/events 200 1.2 ms
//
// The last is a request line: a record whose message is "request" with the
// attributes method, path, status and duration_ms (internal/httpapi's access
// log) is written as those four alone; its request id, route, size and
// client address are the JSON format's (STAGEDOOR_LOG_FORMAT=json), for
// machines. A value that spans lines (a panic's stack) is written after its
// line, indented. Lines are written whole, one Write each, safe for
// concurrent use.
package textlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Options are a Handler's settings.
type Options struct {
	// Level is the lowest level written; nil: INFO.
	Level slog.Leveler
	// Prefix is written before each message ("payrail "), so that the
	// lines of two programs in one terminal tell them apart.
	Prefix string
}

// Handler writes records as short lines of text. Make one with New.
type Handler struct {
	w      io.Writer
	mu     *sync.Mutex // shared by the Handlers made from one by With…
	opts   Options
	attrs  []slog.Attr // from WithAttrs, keys qualified by their groups already
	groups string      // the groups opened by WithGroup, "a.b."
}

// New returns a Handler that writes to w.
func New(w io.Writer, opts *Options) *Handler {
	h := &Handler{w: w, mu: &sync.Mutex{}}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// Enabled reports whether records of level are written.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	min := slog.LevelInfo
	if h.opts.Level != nil {
		min = h.opts.Level.Level()
	}
	return level >= min
}

// WithAttrs returns a Handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(c.attrs[:len(c.attrs):len(c.attrs)], qualified(h.groups, attrs)...)
	return &c
}

// WithGroup returns a Handler whose later attributes are in the group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups += name + "."
	return &c
}

// qualified is attrs with their keys put in groups (flattened: "g.key").
func qualified(groups string, attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		a.Value = a.Value.Resolve()
		if a.Value.Kind() == slog.KindGroup {
			prefix := groups
			if a.Key != "" {
				prefix += a.Key + "."
			}
			out = append(out, qualified(prefix, a.Value.Group())...)
			continue
		}
		if a.Key == "" {
			continue
		}
		a.Key = groups + a.Key
		out = append(out, a)
	}
	return out
}

// Handle writes r as one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	attrs := make([]slog.Attr, 0, len(h.attrs)+r.NumAttrs())
	attrs = append(attrs, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, qualified(h.groups, []slog.Attr{a})...)
		return true
	})
	b := make([]byte, 0, 160)
	if !r.Time.IsZero() {
		b = r.Time.Local().AppendFormat(b, time.TimeOnly)
		b = append(b, ' ')
	}
	if r.Level != slog.LevelInfo {
		b = append(b, r.Level.String()...)
		b = append(b, ' ')
	}
	b = append(b, h.opts.Prefix...)
	if line, ok := requestLine(r.Message, attrs); ok {
		b = append(b, line...)
		attrs = nil
	} else {
		b = append(b, r.Message...)
	}
	var long []slog.Attr // values of many lines: after the line
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindString && strings.Contains(a.Value.String(), "\n") {
			long = append(long, a)
			continue
		}
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
		b = appendValue(b, a.Value, r.Time)
	}
	b = append(b, '\n')
	for _, a := range long {
		b = append(b, "    "...)
		b = append(b, a.Key...)
		b = append(b, ":\n"...)
		for line := range strings.SplitSeq(strings.TrimRight(a.Value.String(), "\n"), "\n") {
			b = append(b, "    "...)
			b = append(b, line...)
			b = append(b, '\n')
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// requestLine is an access-log record's line, "GET /v1/events 200 1.2 ms",
// when msg and attrs are one (see the package's comment).
func requestLine(msg string, attrs []slog.Attr) (string, bool) {
	if msg != "request" {
		return "", false
	}
	var method, path, status string
	ms := -1.0
	for _, a := range attrs {
		switch a.Key {
		case "method":
			method = a.Value.String()
		case "path":
			path = a.Value.String()
		case "status":
			status = a.Value.String()
		case "duration_ms":
			if a.Value.Kind() == slog.KindFloat64 {
				ms = a.Value.Float64()
			}
		}
	}
	if method == "" || path == "" || status == "" || ms < 0 {
		return "", false
	}
	return method + " " + path + " " + status + " " + milliseconds(ms), true
}

// milliseconds is a duration in ms as a person reads it: 0.3 ms, 12 ms.
func milliseconds(ms float64) string {
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// appendValue writes v as text: a time of the record's day as its time of
// day, a duration as Go writes it, a string quoted when it has to be.
func appendValue(b []byte, v slog.Value, at time.Time) []byte {
	switch v.Kind() {
	case slog.KindTime:
		t := v.Time().Local()
		layout := time.DateTime
		if y, m, d := t.Date(); !at.IsZero() {
			if ay, am, ad := at.Local().Date(); y == ay && m == am && d == ad {
				layout = time.TimeOnly
			}
		}
		return t.AppendFormat(b, layout)
	case slog.KindDuration:
		return append(b, v.Duration().String()...)
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return appendString(b, err.Error())
		}
		return appendString(b, fmt.Sprint(v.Any()))
	}
	return append(b, v.String()...)
}

// appendString writes s bare when it is one plain word, else quoted.
func appendString(b []byte, s string) []byte {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == '=' || r == '"' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}
