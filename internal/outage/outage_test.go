package outage

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestAnOutageIsAFewLinesWithCounts(t *testing.T) {
	var buf bytes.Buffer
	r := New(slog.New(slog.NewJSONHandler(&buf, nil)), "payrail", 10*time.Second)
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }

	for range 200 { // one outage, 200 failures within 25 s
		r.Failed(errors.New("connection refused"))
		clock = clock.Add(125 * time.Millisecond)
	}
	r.Succeeded()
	r.Succeeded() // nothing more to say

	var lines []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("not JSON: %q", raw)
		}
		lines = append(lines, m)
	}
	// The first failure, one line at 10 s, one at 20 s, and the end.
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf.String())
	}
	var counted float64
	for _, l := range lines[:3] {
		if l["level"] != "WARN" || l["dependency"] != "payrail" || l["error"] != "connection refused" {
			t.Errorf("line %v: want a WARN about payrail with the error", l)
		}
		counted += l["failures"].(float64)
	}
	if last := lines[3]; last["level"] != "INFO" || last["failures_in_outage"] != 200.0 || last["lasted"] != "25s" {
		t.Errorf("last line %v: want INFO with 200 failures over 25s", last)
	}
	if counted != 161 { // 1 + 80 + 80; the 39 after the last WARN are in the INFO line's total
		t.Errorf("the WARN lines count %v failures, want 161", counted)
	}
}

func TestNilReporterDoesNothing(t *testing.T) {
	var r *Reporter
	r.Failed(errors.New("x"))
	r.Succeeded()
}
