// Package web holds Stagedoor's browser front end: plain HTML, CSS and
// JavaScript modules, with no build step, embedded in the binary so that the
// same origin serves the pages and the API. internal/httpapi serves them: GET /
// is static/index.html, GET /ui/{path} is static/{path}.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static is the front end's files, rooted at web/static.
var Static = mustSub(files, "static")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
