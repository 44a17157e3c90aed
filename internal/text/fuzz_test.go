package text

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// FuzzCheck: Check never panics, refuses only with an errkind.Invalid error
// naming the field, and what it accepts is valid UTF-8 of at most the length
// asked, with no NUL, control or bidirectional formatting character: text
// PostgreSQL stores and a screen shows as it is. Its seed corpus is in
// testdata/fuzz/FuzzCheck.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "North gate 1", "Zoë's café", "ünïcödé ✓", "a\x00b", "\xff\xfe", "gate \u202e1",
		"\u2066isolate\u2069", "tab\there", "bell\a", "\u0085next line", "emoji 👩‍👩‍👧", strings.Repeat("x", 201)} {
		f.Add(s, 200)
	}
	f.Fuzz(func(t *testing.T, value string, max int) {
		max = max%300 + 300 // 1 to 599
		err := Check("field", value, max)
		if err != nil {
			if !errors.Is(err, errkind.Invalid) || !strings.HasPrefix(err.Error(), "field ") {
				t.Fatalf("Check(%q) = %v: not an Invalid error naming the field", value, err)
			}
			if len(err.Error()) > 200 {
				t.Fatalf("Check(%q) = an error of %d bytes", value, len(err.Error()))
			}
			return
		}
		if !utf8.ValidString(value) || utf8.RuneCountInString(value) > max {
			t.Fatalf("Check(%q, %d) accepted invalid UTF-8 or too long a text", value, max)
		}
		for _, r := range value {
			if unicode.IsControl(r) || isBidiControl(r) || r == utf8.RuneError {
				t.Fatalf("Check(%q) accepted %U", value, r)
			}
		}
	})
}
