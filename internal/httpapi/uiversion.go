package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

// The front end's files are cached by versioned URLs. The pages (/, /door,
// /docs/) are revalidated on each load (no-cache, with their ETags), and name
// their files under /ui/v/{version}/ (versionedPages rewrites their /ui/
// links once, when they are first read): the version is a digest of every
// file under /ui/, so a binary with any of them changed names them anew.
// A file asked for under the version in force is answered with
// immutableCache: a browser keeps it a year and never asks again, and the
// modules a page imports by relative paths ("./session.js") inherit the
// version from the page's link, so a page view of a known version costs its
// page's revalidation alone, not a request a module. A file asked for under
// another version (a page of the binary before, during a rollout) or none is
// answered as it is now with no-cache, revalidated by its ETag.

// immutableCache is the Cache-Control of a file under the version in force.
const immutableCache = "public, max-age=31536000, immutable"

// versionedPrefix is where versioned files are: /ui/v/{version}/{file}.
const versionedPrefix = "v/"

// assetVersion is the version of the files of fss: 12 hex digits of a SHA-256
// over every regular file's path and content, in the order of fs.WalkDir.
func assetVersion(fss ...fs.FS) string {
	h := sha256.New()
	for _, fsys := range fss {
		_ = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil // a file that cannot be read is answered as missing; nothing to version
			}
			body, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil
			}
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write(body)
			h.Write([]byte{0})
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// versionedPages returns the edit of the front end's HTML files that names
// their /ui/ files under version: every href="/ui/…" and src="/ui/…".
func versionedPages(version string) func(name string, body []byte) []byte {
	return func(name string, body []byte) []byte {
		if path.Ext(name) != ".html" {
			return body
		}
		for _, attr := range []string{`href="/ui/`, `src="/ui/`} {
			body = bytes.ReplaceAll(body, []byte(attr), []byte(attr+versionedPrefix+version+"/"))
		}
		return body
	}
}

// unversioned is the file name of a path under /ui/ without its version, and
// whether that version is version (the one in force).
func unversioned(name, version string) (file string, current bool) {
	rest, ok := strings.CutPrefix(name, versionedPrefix)
	if !ok {
		return name, false
	}
	v, file, ok := strings.Cut(rest, "/")
	if !ok {
		return name, false
	}
	return file, v == version
}
