// Package web holds Stagedoor's browser front end: plain HTML, CSS and
// JavaScript modules, with no build step, embedded in the binary so that the
// same origin serves the pages and the API. internal/httpapi serves them: GET /
// is static/index.html, GET /door static/door.html, GET /ui/{path}
// static/{path}, and GET /ui/vendor/{path} vendor/{path}: third-party code
// copied from node_modules by scripts/vendor-web.sh (not committed; without
// it the door page decodes QR codes only where the browser can).
package web

import (
	"embed"
	"io/fs"
)

//go:embed static vendor
var files embed.FS

// Static is the front end's files, rooted at web/static.
var Static = mustSub(files, "static")

// Vendor is the third-party browser code, rooted at web/vendor.
var Vendor = mustSub(files, "vendor")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
