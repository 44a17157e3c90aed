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

// TestAThresholdMakesFewFailuresNoOutage: with a threshold of 3, failures
// that a success interrupts before the third are no outage and write
// nothing; the third in a row begins one, counting all three, and its end is
// logged. Down begins one at once, whatever the threshold.
func TestAThresholdMakesFewFailuresNoOutage(t *testing.T) {
	var buf bytes.Buffer
	r := New(slog.New(slog.NewJSONHandler(&buf, nil)), "payrail", 10*time.Second).WithThreshold(3)
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	for range 100 { // a failure in ten, or two in a row: never three
		r.Failed(errors.New("500"))
		r.Failed(errors.New("500"))
		r.Succeeded()
		clock = clock.Add(time.Second)
	}
	if buf.Len() != 0 {
		t.Fatalf("failures under the threshold were logged:\n%s", buf.String())
	}
	for range 3 {
		r.Failed(errors.New("timeout"))
	}
	r.Succeeded()
	r.Down(errors.New("breaker open"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (the outage, its end, the next outage):\n%s", len(lines), buf.String())
	}
	var first, end, next map[string]any
	for i, m := range []*map[string]any{&first, &end, &next} {
		if err := json.Unmarshal([]byte(lines[i]), m); err != nil {
			t.Fatal(err)
		}
	}
	if first["msg"] != "dependency unavailable" || first["failures"] != 3.0 || first["failures_in_outage"] != 3.0 {
		t.Errorf("the outage's first line = %v, want 3 failures", first)
	}
	if end["msg"] != "dependency available again" || end["failures_in_outage"] != 3.0 {
		t.Errorf("its end = %v", end)
	}
	if next["msg"] != "dependency unavailable" || next["failures_in_outage"] != 1.0 {
		t.Errorf("Down's line = %v, want an outage at once", next)
	}
}
