package tally_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/tally"
)

// timers runs a Tally's interval ends when the test says so.
type timers struct {
	mu      sync.Mutex
	pending []func()
}

func (tm *timers) afterFunc(_ time.Duration, f func()) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.pending = append(tm.pending, f)
}

// fire ends the interval under way, and says whether one was.
func (tm *timers) fire() bool {
	tm.mu.Lock()
	fs := tm.pending
	tm.pending = nil
	tm.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return len(fs) > 0
}

// lines are the JSON lines logged, as maps.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	buf.Reset()
	return out
}

// TestFirstAtOnceThenCounts: the first refusal is a line at once; the next
// thousand make none until the interval ends, then one with their count; a
// quiet interval writes nothing and ends the run, so that the next is a first.
func TestFirstAtOnceThenCounts(t *testing.T) {
	var buf bytes.Buffer
	tm := &timers{}
	tl := tally.New(slog.New(slog.NewJSONHandler(&buf, nil)), "refused", tally.Options{AfterFunc: tm.afterFunc})
	kind := func() *tally.Kind {
		return tl.Kind("hold-buyer", slog.LevelInfo, slog.String("limit", "hold-buyer"), slog.Int("status", 429))
	}

	kind().Add()
	got := lines(t, &buf)
	if len(got) != 1 || got[0]["msg"] != "refused" || got[0]["limit"] != "hold-buyer" || got[0]["count"] != 1.0 || got[0]["level"] != "INFO" {
		t.Fatalf("the first refusal: %v, want one line with count 1", got)
	}
	for range 1000 {
		tl.Count("limit", "hold-buyer", slog.LevelInfo)
	}
	if got := lines(t, &buf); len(got) != 0 {
		t.Fatalf("1000 more refusals within the interval wrote %d lines, want none", len(got))
	}
	tm.fire()
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["count"] != 1000.0 || got[0]["total"] != 1001.0 || got[0]["since"] == nil {
		t.Fatalf("the interval's end: %v, want one line of 1000, 1001 in all", got)
	}
	kind().Add()
	tm.fire()
	if got = lines(t, &buf); len(got) != 1 || got[0]["count"] != 1.0 || got[0]["total"] != 1002.0 {
		t.Fatalf("the next interval: %v, want a line of 1", got)
	}
	if !tm.fire() { // a quiet interval
		t.Fatal("no interval was under way")
	}
	if got = lines(t, &buf); len(got) != 0 {
		t.Fatalf("a quiet interval wrote %v", got)
	}
	if tm.fire() {
		t.Fatal("a quiet kind still has its timer")
	}
	kind().Add()
	if got = lines(t, &buf); len(got) != 1 || got[0]["count"] != 1.0 || got[0]["total"] != nil {
		t.Fatalf("a refusal after a quiet interval: %v, want a first line again", got)
	}
}

// TestKindsAreApart: two kinds, each its own line at its own level.
func TestKindsAreApart(t *testing.T) {
	var buf bytes.Buffer
	tm := &timers{}
	tl := tally.New(slog.New(slog.NewJSONHandler(&buf, nil)), "refused", tally.Options{AfterFunc: tm.afterFunc})
	tl.Count("limit", "hold-buyer", slog.LevelInfo)
	tl.Count("bound", "in_flight", slog.LevelWarn)
	tl.Count("bound", "in_flight", slog.LevelWarn)
	got := lines(t, &buf)
	if len(got) != 2 || got[0]["limit"] != "hold-buyer" || got[1]["bound"] != "in_flight" || got[1]["level"] != "WARN" {
		t.Fatalf("%v, want a first line of each kind", got)
	}
	tm.fire()
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["bound"] != "in_flight" || got[0]["count"] != 1.0 {
		t.Fatalf("%v, want one line: in_flight's second", got)
	}
}

// TestCountsLoseNothingUnderConcurrency: refusals counted from many
// goroutines while intervals end add up, in the lines, to all of them.
func TestCountsLoseNothingUnderConcurrency(t *testing.T) {
	var buf bytes.Buffer
	tm := &timers{}
	tl := tally.New(slog.New(slog.NewJSONHandler(&buf, nil)), "refused", tally.Options{AfterFunc: tm.afterFunc})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5000 {
				tl.Count("limit", "k", slog.LevelInfo)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			tm.fire()
		}
	}
	for tm.fire() {
	}
	sum := 0.0
	for _, l := range lines(t, &buf) {
		sum += l["count"].(float64)
	}
	if sum != 40000 {
		t.Errorf("the lines count %v refusals, want 40000", sum)
	}
}

// BenchmarkCount is what one refusal costs its tally.
func BenchmarkCount(b *testing.B) {
	tl := tally.New(slog.New(slog.DiscardHandler), "refused", tally.Options{AfterFunc: func(time.Duration, func()) {}})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tl.Count("limit", "hold-buyer", slog.LevelInfo)
		}
	})
}
