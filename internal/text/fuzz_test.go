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
			if defaultIgnorable(r) && !isJoiner(r) && !unicode.Is(unicode.Variation_Selector, r) {
				t.Fatalf("Check(%q) accepted the invisible %U", value, r)
			}
		}
	})
}

// FuzzEmail: Email never panics, refuses only with an errkind.Invalid error
// naming the field, and what it answers is short enough, holds no invisible
// character, is its own normal form (NormalizeEmail changes nothing) and is
// answered again unchanged: an address has one form. Findings go to
// testdata/fuzz/FuzzEmail.
func FuzzEmail(f *testing.F) {
	for _, s := range []string{"ada@example.com", " Ada@Example.COM ", "jose\u0301@example.com", "\uff41\uff44\uff41@example.com",
		"a\u200b@example.com", "\u0430da@example.com", "ada@ex\u0430mple.com", "\u5c71\u7530@example.jp", "a@b@c", "@", "",
		"i\u2764@example.com", "\u05e9\u05dc\u05d5\u05dd@example.co.il", "\u0130@example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := Email("email", value, 254)
		if err != nil {
			if !errors.Is(err, errkind.Invalid) || !strings.HasPrefix(err.Error(), "email ") || len(err.Error()) > 300 {
				t.Fatalf("Email(%q) = %v: not a short Invalid error naming the field", value, err)
			}
			return
		}
		if len(got) > 254 || NormalizeEmail(got) != got {
			t.Fatalf("Email(%q) = %q: too long, or not in its normal form", value, got)
		}
		if i, r := firstIgnorable(got); i >= 0 {
			t.Fatalf("Email(%q) = %q, which holds the invisible %U", value, got, r)
		}
		if again, err := Email("email", got, 254); err != nil || again != got {
			t.Fatalf("Email(%q) = %q, but Email of that = %q, %v", value, got, again, err)
		}
	})
}
