package text

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Paragraphs is Name for text of several lines, such as an event's
// description: line breaks ("\n"; "\r\n" and "\r" become it) are allowed, at
// most two in a row (a blank line between paragraphs), and each line is
// trimmed of the space at its end; everything else is checked as Check does.
// Empty text is allowed. It returns the text to store.
func Paragraphs(field, value string, maxRunes int) (string, error) {
	value = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(value)
	if utf8.ValidString(value) {
		value = norm.NFC.String(value)
	}
	lines := strings.Split(strings.TrimSpace(value), "\n")
	kept, blank := lines[:0], 0
	for _, line := range lines {
		line = strings.TrimRightFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if line == "" {
			if blank++; blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		if err := Check(field, strings.ReplaceAll(line, "\t", " "), maxRunes); err != nil {
			return "", err
		}
		kept = append(kept, line)
	}
	value = strings.ReplaceAll(strings.Join(kept, "\n"), "\t", " ")
	if n := utf8.RuneCountInString(value); n > maxRunes {
		return "", Check(field, value, maxRunes) // says it is too long
	}
	return value, nil
}
