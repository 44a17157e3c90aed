package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The demo environment file (.env.demo): what stagedoor seed prints, as lines
// that bash, zsh and sh all read the same way, whether sourced (". ./.env.demo")
// or pasted: each comment on a line of its own, each assignment NAME='value'.
// stagedoor demo reads it back with readEnvFile.

// defaultEnvFile is where seed writes the demo data and demo reads it, in the
// current directory, unless STAGEDOOR_DEMO_ENV_FILE or -env-file says otherwise.
const defaultEnvFile = ".env.demo"

// envFilePath is the demo environment file's path: STAGEDOOR_DEMO_ENV_FILE, or
// .env.demo.
func envFilePath(getenv func(string) string) string {
	if p := strings.TrimSpace(getenv("STAGEDOOR_DEMO_ENV_FILE")); p != "" {
		return p
	}
	return defaultEnvFile
}

// shellLines builds the text of a demo environment file.
type shellLines struct{ b strings.Builder }

// comment adds one comment line; control characters (a newline in a venue's
// name, say) become spaces, so the comment cannot end early.
func (s *shellLines) comment(format string, args ...any) {
	text := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, fmt.Sprintf(format, args...))
	s.b.WriteString("# " + text + "\n")
}

// set adds NAME='value'.
func (s *shellLines) set(name, value string) {
	s.b.WriteString(name + "=" + shellQuote(value) + "\n")
}

func (s *shellLines) String() string { return s.b.String() }

// shellQuote puts v in single quotes, inside which no shell expands anything;
// each single quote in v closes the quotes, adds an escaped quote (a
// backslash and a quote) and opens them again.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// writeEnvFile writes content to path, readable by its owner only (it holds a
// scanner key and maybe the admin token), replacing the file in one rename.
func writeEnvFile(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone already after the rename
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

var envLine = regexp.MustCompile(`^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// readEnvFile reads the assignments of a demo environment file: blank lines
// and comments are skipped, a value may be single-quoted (as seed writes it),
// double-quoted or bare. A missing file is an error that wraps fs.ErrNotExist.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := envLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not NAME=value: %q", path, n, line)
		}
		value, err := shellWord(m[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, n, m[1], err)
		}
		vars[m[1]] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return vars, nil
}

// shellWord reads one shell word without expansions: '…' taken as is, "…"
// with \" \\ \$ \` escapes, bare characters up to a space (after which only a
// comment may follow).
func shellWord(s string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", errors.New("a single quote is not closed")
			}
			out.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				out.WriteByte(s[i])
			}
			if i == len(s) {
				return "", errors.New("a double quote is not closed")
			}
			i++
		case c == '\\' && i+1 < len(s):
			out.WriteByte(s[i+1])
			i += 2
		case c == ' ' || c == '\t':
			if rest := strings.TrimSpace(s[i:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("unexpected %q after the value (quote a value with spaces)", rest)
			}
			return out.String(), nil
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String(), nil
}

// missingFile reports whether err is a file that does not exist.
func missingFile(err error) bool { return errors.Is(err, fs.ErrNotExist) }
