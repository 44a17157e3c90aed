package text

import (
	"errors"
	"strings"
	"testing"
	"unicode"

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
		// Invisible (default-ignorable) characters: refused, but for a joiner
		// between two visible characters and a variation selector after one.
		{"Ada\u200b", 10, "label must not contain invisible characters (U+200B at byte 3)"},
		{"A\u2060da", 10, "invisible characters (U+2060 at byte 1)"},
		{"\ufeffAda", 10, "invisible characters (U+FEFF at byte 0)"},
		{"Ad\u00ada", 10, "invisible characters (U+00AD"},            // soft hyphen
		{"\u3164", 10, "invisible characters (U+3164"},               // Hangul filler
		{"a\U000e0041", 10, "invisible characters (U+E0041"},         // a tag character
		{"\u034f", 10, "invisible characters"},                       // combining grapheme joiner
		{"\u180e", 10, "invisible characters"},                       // Mongolian vowel separator
		{"I \u2764\ufe0f gigs", 20, ""},                              // ❤️: a variation selector after its emoji
		{"\u2764\ufe0f\u200d\U0001f525", 20, ""},                     // ❤️‍🔥: a joiner after the selector
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", 20, ""}, // Persian: a non-joiner inside a word
		{"\ufe0fx", 10, "invisible characters (U+FE0F at byte 0)"},
		{"a\ufe0f\ufe0f", 10, "invisible characters (U+FE0F at byte 4)"},
		{"\u200dx", 10, "invisible characters (U+200D at byte 0)"},
		{"x\u200d", 10, "invisible characters (U+200D at byte 1)"},
		{"x \u200dy", 10, "invisible characters (U+200D at byte 2)"},
		{"x\u200d\u200dy", 10, "invisible characters (U+200D at byte 1)"},
		{"x\u200c y", 10, "invisible characters (U+200C at byte 1)"},
		{"\u0600\u0661", 10, ""}, // an Arabic number sign is a format character that shows
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

func TestName(t *testing.T) {
	for _, tt := range []struct{ in, want, says string }{
		{"  Ada  ", "Ada", ""},
		{"Jose\u0301", "Jos\u00e9", ""}, // NFC: e and a combining accent become é
		{"Zo\u00eb", "Zo\u00eb", ""},
		{" \u3000 ", "", "name is required"},
		{"\u200b", "", "name must not contain invisible characters (U+200B at byte 0)"},
		{"Ada\u2060Lovelace", "", "U+2060"},
		{"\ufeffAda", "", "U+FEFF"},
	} {
		got, err := Name("name", tt.in, 20)
		switch {
		case tt.says == "" && (err != nil || got != tt.want):
			t.Errorf("Name(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.says != "" && (err == nil || !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("Name(%q) = %q, %v; want an Invalid error saying %q", tt.in, got, err, tt.says)
		}
	}
}

// TestEmail: look-alike addresses are one address (normalized alike) or none
// (refused, saying why).
func TestEmail(t *testing.T) {
	for _, tt := range []struct{ in, want, says string }{
		{" Ada@Example.COM ", "ada@example.com", ""},
		{"first.last+tag@example.com", "first.last+tag@example.com", ""},
		{"jose\u0301@example.com", "jos\u00e9@example.com", ""},                                                      // NFC
		{"JOS\u00c9@example.com", "jos\u00e9@example.com", ""},                                                       // lower case, then the same
		{"\uff41\uff44\uff41@example.com", "ada@example.com", ""},                                                    // full-width ａｄａ is ada
		{"\u03b4\u03bf\u03ba\u03b9\u03bc\u03ae@example.com", "\u03b4\u03bf\u03ba\u03b9\u03bc\u03ae@example.com", ""}, // Greek alone
		{"\u5c71\u7530\u305f\u308d\u3046@example.jp", "\u5c71\u7530\u305f\u308d\u3046@example.jp", ""},               // Han and Hiragana: Japanese
		{"taro\u5c71\u7530@example.jp", "taro\u5c71\u7530@example.jp", ""},                                           // Latin with Han
		{"a\u200b@example.com", "", "email must not contain invisible characters (U+200B at byte 1)"},
		{"a\u2060b@example.com", "", "U+2060"},
		{"\ufeffa@example.com", "", "U+FEFF"},
		{"ad\u00ada@example.com", "", "U+00AD"},
		{"a@exam\u200dple.com", "", "U+200D"},                                                    // no joiner anywhere in an address
		{"\u0430da@example.com", "", "email mixes scripts in \"\u0430da\" (Cyrillic and Latin)"}, // Cyrillic а
		{"p\u0430ypal@example.com", "", "Cyrillic and Latin"},
		{"ada@ex\u0430mple.com", "", "email mixes scripts in \"ex\u0430mple\""}, // in the domain too
		{"\u03b1da@example.com", "", "Greek and Latin"},
		{"\u5c71\u7530\u0430@example.jp", "", "Cyrillic and Han"},
		{"i\u2764@example.com", "", "may not hold before the @"}, // a symbol
		{"a\ue000@example.com", "", "may not hold before the @"}, // private use
		{"ada@example\ue000.com", "", "unassigned or private-use"},
		{"ada", "", "not an address"},
		{"ada@", "", "not an address"},
		{"a\x00@example.com", "", "control characters"},
	} {
		got, err := Email("email", tt.in, 254)
		switch {
		case tt.says == "" && (err != nil || got != tt.want):
			t.Errorf("Email(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.says != "" && (err == nil || !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("Email(%q) = %q, %v; want an Invalid error saying %q", tt.in, got, err, tt.says)
		}
		if err == nil && NormalizeEmail(got) != got {
			t.Errorf("Email(%q) = %q, which NormalizeEmail changes", tt.in, got)
		}
	}
}

// TestDefaultIgnorableMatchesUnicode: the derivation from the standard
// library's tables gives Unicode's list (DerivedCoreProperties.txt, 15.0:
// 4,174 code points), checked on its ranges' ends and its count.
func TestDefaultIgnorableMatchesUnicode(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if defaultIgnorable(r) {
			n++
		}
	}
	if n != 4174 {
		t.Errorf("%d default-ignorable code points, want 4174", n)
	}
	for _, r := range []rune{0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180F, 0x200B, 0x200F,
		0x202A, 0x202E, 0x2060, 0x206F, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0, 0xFFF8, 0x1BCA0, 0x1BCA3,
		0x1D173, 0x1D17A, 0xE0000, 0xE0FFF} {
		if !defaultIgnorable(r) {
			t.Errorf("%U is default-ignorable", r)
		}
	}
	for _, r := range []rune{' ', 'a', 0x00A0, 0x0600, 0x0605, 0x06DD, 0x110BD, 0x2028, 0xFFF9, 0xFFFB, 0x13430, 0x1343F, 0x1F600} {
		if defaultIgnorable(r) {
			t.Errorf("%U is not default-ignorable", r)
		}
	}
}

// TestParagraphs: line breaks are kept (\r\n and \r become \n), blank lines
// fold to one, lines lose their trailing space and tabs become spaces; any
// other control, bidi or invisible character is refused, as is text over the
// bound.
func TestParagraphs(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "",
		"  One line.  ":              "One line.",
		"First.\r\nSecond.\rThird.":  "First.\nSecond.\nThird.",
		"A.\n\n\n\nB.":               "A.\n\nB.",
		"Tab\there \t\nnext":         "Tab here\nnext",
		"cafe\u0301":                 "café",
		"Doors 7 pm.\n\nNo re-entry": "Doors 7 pm.\n\nNo re-entry",
	} {
		got, err := Paragraphs("description", in, 100)
		if err != nil || got != want {
			t.Errorf("Paragraphs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a\x00b", "bell\a", "evil\u202Etxt", "zero\u200Bwidth", strings.Repeat("x", 101), "a\xffb"} {
		if _, err := Paragraphs("description", bad, 100); !errors.Is(err, errkind.Invalid) {
			t.Errorf("Paragraphs(%q) = %v, want invalid", bad, err)
		}
	}
}
