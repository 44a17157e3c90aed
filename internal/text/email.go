package text

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// NormalizeEmail is email as Stagedoor stores and compares it: trimmed,
// lower-cased and in NFC. Email checks it further and maps the part before the
// @ as PRECIS does; an email Email accepts is already in this form.
func NormalizeEmail(email string) string {
	return norm.NFC.String(strings.ToLower(strings.TrimSpace(email)))
}

// Email normalizes an email address and checks that it cannot pass for
// another: it returns the address to store, compare and key limits by, or an
// errkind.Invalid error naming field. In order:
//
//   - it is trimmed and must pass Check, and hold no invisible
//     (default-ignorable) character at all: a@ and a<U+200B>@ look the same;
//   - it is lower-cased and put in NFC, so that é typed as one character or as e
//     and a combining accent is one address;
//   - the part before the last @ is mapped and checked by PRECIS's
//     UsernameCaseMapped profile (RFC 8265): full-width forms become their
//     ASCII letters (ａｄａ is ada), and symbols, spaces and unassigned
//     characters are refused;
//   - the part before the @, and each label of the domain, must be of one
//     script (characters common to all scripts, such as digits and dots,
//     aside), or of the scripts written together in Japanese, Chinese or
//     Korean, each with Latin: Unicode's "highly restrictive" level (UTS #39).
//     So the Cyrillic а (U+0430) cannot stand among Latin letters in
//     аda@example.com. (An address wholly in Cyrillic letters that look
//     Latin is not caught: that needs UTS #39's confusables data.)
//
// Whether the address is well formed (one @, a domain) is for the caller to
// check with net/mail; an address without an @ is refused here too.
func Email(field, email string, maxBytes int) (string, error) {
	email = strings.TrimSpace(email)
	if err := Check(field, email, maxBytes); err != nil {
		return "", err
	}
	if i, r := firstIgnorable(email); i >= 0 {
		return "", errkind.Invalidf("%s must not contain invisible characters (%U at byte %d)", field, r, i)
	}
	email = NormalizeEmail(email)
	at := strings.LastIndexByte(email, '@')
	if at <= 0 || at == len(email)-1 {
		return "", errkind.Invalidf("%s %s is not an address such as ada@example.com", field, Describe(email))
	}
	local, err := precis.UsernameCaseMapped.String(email[:at])
	if err != nil {
		return "", errkind.Invalidf("%s %s holds a character an address may not hold before the @ (only letters, digits and ASCII punctuation)",
			field, Describe(email))
	}
	domain := email[at+1:]
	for _, part := range append([]string{local}, strings.Split(domain, ".")...) {
		if err := oneScript(field, part); err != nil {
			return "", err
		}
	}
	email = local + "@" + domain
	if len(email) > maxBytes {
		return "", errkind.Invalidf("%s is longer than %d bytes", field, maxBytes)
	}
	return email, nil
}

// oneScript refuses part (of an email) unless its letters are of one script,
// or of one of the sets of scripts UTS #39's highly restrictive level allows
// together; and any character of no script (unassigned or private use).
func oneScript(field, part string) error {
	var scripts []string
	for _, r := range part {
		s := scriptOf(r)
		switch s {
		case "Common", "Inherited":
			continue
		case "":
			return errkind.Invalidf("%s must not contain unassigned or private-use characters (%U)", field, r)
		}
		if !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) <= 1 {
		return nil
	}
	for _, allowed := range scriptsWrittenTogether {
		if subset(scripts, allowed) {
			return nil
		}
	}
	slices.Sort(scripts)
	return errkind.Invalidf("%s mixes scripts in %s (%s), as look-alike addresses do; use one script",
		field, Describe(part), strings.Join(scripts, " and "))
}

// scriptsWrittenTogether are UTS #39's highly restrictive sets: Japanese,
// Chinese and Korean, each with Latin.
var scriptsWrittenTogether = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// scriptOf is the Unicode script of r, from the standard library's tables
// ("" for none: unassigned or private use).
func scriptOf(r rune) string {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		return "Latin"
	case r < 0x80:
		return "Common"
	}
	for _, s := range sortedScripts() {
		if unicode.Is(unicode.Scripts[s], r) {
			return s
		}
	}
	return ""
}

// sortedScripts is the names of unicode.Scripts, in an order that does not
// change between calls.
var sortedScripts = sync.OnceValue(func() []string {
	names := make([]string, 0, len(unicode.Scripts))
	for name := range unicode.Scripts {
		names = append(names, name)
	}
	// The scripts of most addresses first, then the rest by name.
	first := []string{"Latin", "Common", "Inherited", "Cyrillic", "Greek", "Han", "Hiragana", "Katakana", "Hangul", "Arabic", "Hebrew", "Devanagari"}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(first, a), slices.Index(first, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
})
