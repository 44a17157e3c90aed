package text

import (
	"errors"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		value string
		max   int
		says  string // "" when the value passes
	}{
		{"North gate 1", 20, ""},
		{"Zoë's café ✓ 👩‍👩‍👧", 20, ""}, // a zero-width joiner is not a bidi control
		{"", 5, ""},
		{"12345", 5, ""},
		{"123456", 5, "label is longer than 5 characters"},
		{"ééééé", 5, ""}, // characters, not bytes
		{"a\x00b", 5, "label must not contain control characters (U+0000 at byte 1)"},
		{"tab\t", 5, "control characters"},
		{"\u0085", 5, "control characters"},
		{"\x7f", 5, "control characters"},
		{"gate \u202e1", 10, "bidirectional formatting characters (U+202E at byte 5)"},
		{"\u2067x", 5, "bidirectional"},
		{"\u200f", 5, "bidirectional"},
		{"\xff", 5, "label is not valid UTF-8"},
		{"\ufffd", 5, "replacement character"},
	}
	for _, tt := range tests {
		err := Check("label", tt.value, tt.max)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("Check(%q, %d) = %v, want it to pass", tt.value, tt.max, err)
		case tt.says != "" && (err == nil || !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("Check(%q, %d) = %v, want an Invalid error saying %q", tt.value, tt.max, err, tt.says)
		}
	}
	if err := Required("label", "", 5); err == nil || err.Error() != "label is required" {
		t.Errorf("Required of empty = %v", err)
	}
}

func TestDescribeShortensLongInput(t *testing.T) {
	if got := Describe("short"); got != `"short"` {
		t.Errorf("Describe(short) = %s", got)
	}
	if got := Describe(strings.Repeat("é", 60<<10)); len(got) > 120 || !strings.Contains(got, "122880 bytes") {
		t.Errorf("Describe of 60 KB = %d bytes: %.120s", len(got), got)
	}
}
