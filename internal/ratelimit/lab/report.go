package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The figures the lab of lesson 13, "Rate Limiting & Backpressure", published
// (its tools/ratelimit-test.sh boundary, bench, memory, nonatomic and e2e runs).
// Each table prints them beside what this machine measures.
const (
	// Boundary: the most allowed in any sliding second, at 100 a second.
	LabBoundaryFixed   = 200
	LabBoundaryLog     = 100
	LabBoundaryCounter = 105
	LabBoundaryBucket  = 119

	// Speed: the p50 of one decision through the lab's HTTP service, all four
	// algorithms "around 0.08 ms", beside an empty GET's 0.073 ms.
	LabP50Ms         = 0.08
	LabBaselineP50Ms = 0.073

	// Memory: bytes per user at limit 100: the log 1,499, the other three
	// between 121 and 171.
	LabMemoryLog       = 1499
	LabMemoryOthersMin = 121
	LabMemoryOthersMax = 171

	// Atomicity: 200 users, a crash every 10th: 20 keys left without a TTL by
	// INCR then EXPIRE, 0 by the script.
	LabAtomicityUsers      = 200
	LabAtomicityCrashEvery = 10
	LabNoTTLTwoCommands    = 20
	LabNoTTLScript         = 0

	// Global: three replicas, 500/s for 10 s from 20 connections: 5,493 allowed
	// of 5,500 expected, 185,660 refused (about 18,500 a second).
	LabGlobalAllowed  = 5493
	LabGlobalExpected = 5500
	LabGlobalRefused  = 185660
)

// table is one experiment's table: a title, columns, rows and the lines of
// explanation under it.
type table struct {
	title  string
	header []string
	rows   [][]string
	notes  []string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

// write prints the table with aligned columns and its notes, wrapped.
func (t *table) write(w io.Writer) {
	fmt.Fprintf(w, "\n%s\n%s\n", t.title, strings.Repeat("=", len([]rune(t.title))))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, n := range t.notes {
		fmt.Fprintln(w, wrap("- "+n, 100, "  "))
	}
}

// wrap breaks s into lines of at most width runes, continuing with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		n := len([]rune(word))
		if i > 0 && line+1+n > width {
			b.WriteString("\n" + indent)
			line = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}

// writeJSON writes v as indented JSON to dir/name and returns the path.
func writeJSON(dir, name string, v any) (string, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// thousands writes n with a comma every three digits: 185,660.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fixed writes f with d decimals, or "—" for NaN.
func fixed(f float64, d int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "—"
	}
	return strconv.FormatFloat(f, 'f', d, 64)
}

// labInt writes one of the lab's figures, or "—" when it published none.
func labInt(n int) string {
	if n < 0 {
		return "—"
	}
	return thousands(int64(n))
}
