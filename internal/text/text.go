// Package text is the one validator of text a client chooses: names, venues,
// labels, emails, tokens and header values. Every handler's input passes it
// before it is stored, used as a key or sent on, so that no NUL byte reaches
// PostgreSQL (which refuses it: a 500), no invalid UTF-8 is stored, no
// control or bidirectional-override character makes a label read differently
// on screen than it is (U+202E turns "gate 1.exe" around), and no invisible
// character (U+200B, U+2060, U+FEFF) makes two names that look alike differ.
// Names are stored in NFC (Name); emails are normalized and checked further,
// so that look-alike addresses are one address or none (Email).
//
// It owns no table; its errors are errkind.Invalid errors that name the field.
package text

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// Check reports an errkind.Invalid error naming field unless value is valid
// UTF-8, holds no control character (C0, DEL, C1), no bidirectional
// formatting character and no invisible (default-ignorable) character but a
// joiner or variation selector where it joins (see invisibleAt), and is at
// most maxRunes characters long. An empty value passes: Required refuses it.
func Check(field, value string, maxRunes int) error {
	if !utf8.ValidString(value) {
		return errkind.Invalidf("%s is not valid UTF-8", field)
	}
	n := 0
	for i, r := range value {
		if n++; n > maxRunes {
			return errkind.Invalidf("%s is longer than %d characters", field, maxRunes)
		}
		if reason := forbidden(r); reason != "" {
			return errkind.Invalidf("%s must not contain %s (%U at byte %d)", field, reason, r, i)
		}
	}
	if i, r := invisibleAt(value); i >= 0 {
		return errkind.Invalidf("%s must not contain invisible characters (%U at byte %d)", field, r, i)
	}
	return nil
}

// Required is Check that also refuses an empty value.
func Required(field, value string, maxRunes int) error {
	if value == "" {
		return errkind.Invalidf("%s is required", field)
	}
	return Check(field, value, maxRunes)
}

// forbidden says why r may not appear in text, or "" when it may.
func forbidden(r rune) string {
	switch {
	case unicode.IsControl(r):
		return "control characters"
	case isBidiControl(r):
		return "bidirectional formatting characters"
	case r == utf8.RuneError:
		return "the replacement character"
	}
	return ""
}

// isBidiControl reports the characters that change the order text is shown
// in: the embeddings, overrides and isolates, and the implicit marks.
func isBidiControl(r rune) bool {
	switch {
	case r == '\u061C', r == '\u200E', r == '\u200F':
		return true
	case r >= '\u202A' && r <= '\u202E':
		return true
	case r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// Describe quotes value for an error message, shortened to at most 40
// characters, so that a 60 KB input does not come back in a 60 KB problem.
func Describe(value string) string {
	const most = 40
	if utf8.RuneCountInString(value) <= most {
		return fmt.Sprintf("%q", value)
	}
	runes := []rune(value)
	return fmt.Sprintf("%q… (%d bytes)", string(runes[:most]), len(value))
}
