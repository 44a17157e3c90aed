package textlog_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/stagedoor/stagedoor/internal/textlog"
)

// at is a record's time in the test: 07:52:01 of a day, local time.
var at = time.Date(2026, 12, 3, 7, 52, 1, 0, time.Local)

// lineOf writes one record through a Handler and returns what it wrote.
func lineOf(t *testing.T, opts *textlog.Options, level slog.Level, msg string, attrs ...slog.Attr) string {
	t.Helper()
	var buf bytes.Buffer
	h := textlog.New(&buf, opts)
	r := slog.NewRecord(at, level, msg, 0)
	r.AddAttrs(attrs...)
	if err := h.Handle(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		name  string
		level slog.Level
		msg   string
		attrs []slog.Attr
		want  string
	}{
		{"info has no level", slog.LevelInfo, "listening", []slog.Attr{slog.String("addr", "127.0.0.1:8080")},
			"07:52:01 listening addr=127.0.0.1:8080\n"},
		{"other levels say theirs", slog.LevelWarn, "dependency unavailable",
			[]slog.Attr{slog.String("dependency", "redis"), slog.Any("error", errors.New("dial tcp: refused")), slog.Int("failures", 3)},
			"07:52:01 WARN dependency unavailable dependency=redis error=\"dial tcp: refused\" failures=3\n"},
		{"a request is four words", slog.LevelInfo, "request", []slog.Attr{
			slog.String("request_id", "abc"), slog.String("method", "GET"), slog.String("path", "/v1/events"),
			slog.String("route", "/v1/events"), slog.Int("status", 200), slog.Int64("bytes", 1234),
			slog.Float64("duration_ms", 1.234), slog.String("remote", "127.0.0.1:5555")},
			"07:52:01 GET /v1/events 200 1.2 ms\n"},
		{"a slow request in whole ms", slog.LevelDebug, "request", []slog.Attr{
			slog.String("method", "POST"), slog.String("path", "/v1/holds"), slog.Int("status", 429), slog.Float64("duration_ms", 123.6)},
			"07:52:01 DEBUG POST /v1/holds 429 124 ms\n"},
		{"a request line without its numbers is a line like others", slog.LevelInfo, "request", []slog.Attr{slog.String("method", "GET")},
			"07:52:01 request method=GET\n"},
		{"times of the day, durations, empty strings", slog.LevelInfo, "refused", []slog.Attr{
			slog.Time("since", at.Add(-10*time.Second)), slog.Time("long_ago", at.AddDate(0, 0, -1)), slog.Duration("lasted", 1500*time.Millisecond), slog.String("why", "")},
			"07:52:01 refused since=07:51:51 long_ago=2026-12-02 07:52:01 lasted=1.5s why=\"\"\n"},
		{"a stack goes under its line", slog.LevelError, "panic", []slog.Attr{slog.String("panic", "boom"), slog.String("stack", "goroutine 1\nmain.go:1\n")},
			"07:52:01 ERROR panic panic=boom\n    stack:\n    goroutine 1\n    main.go:1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := lineOf(t, &textlog.Options{Level: slog.LevelDebug}, tt.level, tt.msg, tt.attrs...)
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestPrefixGroupsAndLevel: a prefix names the program, attributes added with
// With and groups come out flattened, and records under the level are not
// written.
func TestPrefixGroupsAndLevel(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(textlog.New(&buf, &textlog.Options{Prefix: "payrail "})).With("program", "payrail")
	logger.WithGroup("charge").Info("charged", "amount", 4500, slog.Group("card", "brand", "visa"))
	logger.Debug("not written")
	line := buf.String()
	if !strings.HasSuffix(line, " payrail charged program=payrail charge.amount=4500 charge.card.brand=visa\n") {
		t.Errorf("got %q", line)
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("wrote %d lines, want 1: %q", strings.Count(line, "\n"), line)
	}
}

// TestLinesAreWholeUnderConcurrency: lines written at once from many
// goroutines never interleave.
func TestLinesAreWholeUnderConcurrency(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(textlog.New(&buf, nil))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for range 50 {
				logger.Info("tick", "goroutine", i, "text", strings.Repeat("x", 100))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("%d lines, want 1000", len(lines))
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " text="+strings.Repeat("x", 100)) {
			t.Fatalf("a torn line: %q", l)
		}
	}
}

// TestHandlerContract runs the standard library's conformance tests of a
// slog.Handler, reading each line back into a map.
func TestHandlerContract(t *testing.T) {
	var buf bytes.Buffer
	h := textlog.New(&buf, &textlog.Options{Level: slog.LevelDebug})
	err := slogtest.TestHandler(h, func() []map[string]any {
		var out []map[string]any
		for line := range strings.SplitSeq(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			out = append(out, parse(line))
		}
		return out
	})
	if err != nil {
		t.Error(err)
	}
}

// parse reads a line of TestHandlerContract's records back: "time msg
// k=v …", groups nested again at their dots.
func parse(line string) map[string]any {
	m := map[string]any{}
	fields := strings.Fields(line)
	if len(fields) > 0 && strings.Count(fields[0], ":") == 2 {
		m[slog.TimeKey] = fields[0]
		fields = fields[1:]
	}
	m[slog.LevelKey] = "INFO"
	var msg []string
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			msg = append(msg, f)
			continue
		}
		dst := m
		parts := strings.Split(k, ".")
		for _, g := range parts[:len(parts)-1] {
			sub, ok := dst[g].(map[string]any)
			if !ok {
				sub = map[string]any{}
				dst[g] = sub
			}
			dst = sub
		}
		dst[parts[len(parts)-1]] = v
	}
	m[slog.MessageKey] = strings.Join(msg, " ")
	return m
}
