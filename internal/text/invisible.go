package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Invisible characters. Unicode's Default_Ignorable_Code_Point property names
// the characters a renderer shows as nothing when it cannot show them: the
// zero-width space (U+200B), the word joiner (U+2060), the byte-order mark
// (U+FEFF), the soft hyphen, Hangul fillers, tag characters and more. A name
// holding one looks like a name without it, so PRECIS (RFC 8264) disallows
// them all in its identifier and freeform classes; Stagedoor refuses them in
// all text. PRECIS also disallows the two joiners and the variation selectors
// outside narrow contexts, which would refuse emoji such as 👩‍👩‍👧 (joined
// by U+200D) and ❤️ (U+FE0F); those are allowed where they do something: a
// joiner between two visible characters (a variation selector may come
// between), a variation selector right after a visible character.

// defaultIgnorable reports Unicode's derived Default_Ignorable_Code_Point,
// from the standard library's tables of the properties it is derived from
// (DerivedCoreProperties.txt): Other_Default_Ignorable_Code_Point, format
// characters (Cf) and variation selectors, less white space, the interlinear
// annotation characters, the Egyptian hieroglyph format controls and the
// prepended concatenation marks.
func defaultIgnorable(r rune) bool {
	if r < 0xAD { // the first is the soft hyphen; ASCII and Latin-1 are the common case
		return false
	}
	if !unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector) {
		return false
	}
	switch {
	case unicode.In(r, unicode.White_Space, unicode.Prepended_Concatenation_Mark),
		'\uFFF9' <= r && r <= '\uFFFB',
		0x13430 <= r && r <= 0x1343F:
		return false
	}
	return true
}

func isJoiner(r rune) bool { return r == '\u200C' || r == '\u200D' }

// visible is a character that shows: neither ignorable nor a space.
func visible(r rune) bool { return !defaultIgnorable(r) && !unicode.IsSpace(r) }

// invisibleAt returns the byte offset and the first default-ignorable
// character of value that is not allowed where it stands, or -1. A joiner
// must stand between two visible characters (a variation selector may come
// between the first and it); a variation selector right after a visible
// character.
func invisibleAt(value string) (int, rune) {
	var prev, beforePrev rune // the two characters before, 0 at the start
	for i, r := range value {
		if defaultIgnorable(r) {
			ok := false
			switch {
			case unicode.Is(unicode.Variation_Selector, r):
				ok = prev != 0 && visible(prev)
			case isJoiner(r):
				after, _ := utf8.DecodeRuneInString(value[i+utf8.RuneLen(r):])
				before := prev
				if unicode.Is(unicode.Variation_Selector, prev) {
					before = beforePrev
				}
				ok = before != 0 && visible(before) && after != utf8.RuneError && visible(after)
			}
			if !ok {
				return i, r
			}
		}
		beforePrev, prev = prev, r
	}
	return -1, 0
}

// firstIgnorable returns the byte offset and the first default-ignorable
// character of value, wherever it stands, or -1.
func firstIgnorable(value string) (int, rune) {
	for i, r := range value {
		if defaultIgnorable(r) {
			return i, r
		}
	}
	return -1, 0
}

// Name trims value and puts it in NFC (so that "é" typed as e and a combining
// accent is stored as the one character), then checks it as Required does:
// text a person chose to be shown by, such as an account's, an event's or a
// venue's name. It returns the text to store.
func Name(field, value string, maxRunes int) (string, error) {
	value = strings.TrimSpace(value)
	if utf8.ValidString(value) {
		value = norm.NFC.String(value)
	}
	if err := Required(field, value, maxRunes); err != nil {
		return "", err
	}
	return value, nil
}
