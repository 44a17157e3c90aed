package main

import (
	"io"
	"log/slog"

	"golang.org/x/term"

	"github.com/stagedoor/stagedoor/internal/textlog"
)

// newLogger is the program's logger on w at level, in format
// (STAGEDOOR_LOG_FORMAT): JSON, each line naming the program that wrote it
// (make run interleaves two); or short lines of text for a person, those of
// any program but stagedoor itself beginning with its name; auto is text on
// a terminal, JSON otherwise.
func newLogger(w io.Writer, level, format, program string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	if format == "text" || format == "auto" && isTerminal(w) {
		prefix := ""
		if program != "stagedoor" {
			prefix = program + " "
		}
		return slog.New(textlog.New(w, &textlog.Options{Level: l, Prefix: prefix}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})).With("program", program)
}

// isTerminal reports whether w is a terminal (a file whose descriptor is one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
