package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/web"
)

// staticFiles answers the files of one file system (the front end's, the
// vendored code's, Swagger UI's) from memory: each file is read at its first
// request, with its ETag, and a compressible one of at least compressMin bytes
// is compressed with gzip once, then kept. A file system may hold a file only
// compressed (Swagger UI's name.js.gz, compressed when it was built): name.js
// is then answered from it, and decompressed once for a client that does not
// take gzip. Only files found are kept, so a scan of made-up names costs no
// memory.
type staticFiles struct {
	fsys fs.FS
	// edit, when set, changes a file's body as it is read (versionedPages),
	// before its ETag and compression.
	edit  func(name string, body []byte) []byte
	mu    sync.Mutex
	files map[string]*staticFile
}

// staticFile is one file as it is answered.
type staticFile struct {
	contentType string
	body        []byte // as it is
	etag        string
	gz          []byte // gzip-compressed; nil: sent as it is only
	gzETag      string
}

// servedContract and uiVersion are the same for every Server of the process
// (their files are embedded), so they are made once: compressing the contract
// at gzip's best took most of a Server's making.
var (
	servedContract = sync.OnceValue(func() *staticFile { return newStaticFile("application/yaml", docs.OpenAPI, nil) })
	uiVersion      = sync.OnceValue(func() string { return assetVersion(web.Static, web.Vendor) })
)

// compressMin is the smallest file worth compressing: below it, gzip's own
// header and a round trip's packet leave nothing to gain.
const compressMin = 1024

func newStaticFiles(fsys fs.FS) *staticFiles {
	return &staticFiles{fsys: fsys, files: map[string]*staticFile{}}
}

// file returns the file called name, loading it the first time; nil when
// there is no such file (a directory is none).
func (sf *staticFiles) file(name string) (*staticFile, error) {
	if name == "" || !fs.ValidPath(name) {
		return nil, nil
	}
	sf.mu.Lock()
	f, ok := sf.files[name]
	sf.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := loadStatic(sf.fsys, name, sf.edit)
	if err != nil || f == nil {
		return nil, err
	}
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if cur, ok := sf.files[name]; ok {
		return cur, nil // another request loaded it meanwhile
	}
	sf.files[name] = f
	return f, nil
}

func loadStatic(fsys fs.FS, name string, edit func(string, []byte) []byte) (*staticFile, error) {
	body, err := readRegular(fsys, name)
	if err != nil {
		return nil, err
	}
	if body != nil {
		if edit != nil {
			body = edit(name, body)
		}
		return newStaticFile(contentTypeOf(name), body, nil), nil
	}
	gz, err := readRegular(fsys, name+".gz") // only compressed, or not there at all
	if err != nil || gz == nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("static file %s.gz: %w", name, err)
	}
	if body, err = io.ReadAll(zr); err != nil {
		return nil, fmt.Errorf("static file %s.gz: %w", name, err)
	}
	return newStaticFile(contentTypeOf(name), body, gz), nil
}

// newStaticFile is body as answered: with its ETags, and compressed (unless gz
// is given already) when its type is compressible and it is large enough.
func newStaticFile(contentType string, body, gz []byte) *staticFile {
	f := &staticFile{contentType: contentType, body: body, gz: gz}
	if gz == nil && compressible(contentType) && len(body) >= compressMin {
		f.gz = gzipped(body, gzip.BestCompression)
	}
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:12])
	f.etag = `"` + tag + `"`
	if f.gz != nil {
		f.gzETag = `"` + tag + `-gzip"` // another representation: another strong tag
	}
	return f
}

// gzipped is body compressed at level; nil when that does not make it smaller.
func gzipped(body []byte, level int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, level) // a valid level: no error
	_, _ = zw.Write(body)                     // to memory: no error
	_ = zw.Close()
	if buf.Len() >= len(body) {
		return nil
	}
	return buf.Bytes()
}

// readRegular reads name when it is a regular file; nil, nil when there is no
// such file or it is a directory.
func readRegular(fsys fs.FS, name string) ([]byte, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil || !info.Mode().IsRegular() {
		return nil, nil
	}
	return fs.ReadFile(fsys, name)
}

// contentTypeOf is the type of a file by its extension; one it does not know
// is application/octet-stream, never sniffed (the body may be compressed).
func contentTypeOf(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// compressible reports whether a type is text-like enough for gzip to pay.
func compressible(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	switch t {
	case "application/javascript", "application/json", "application/problem+json", "application/wasm",
		"application/yaml", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(t, "text/")
}

// serveStaticFile answers f with its ETag (If-None-Match: 304), ranges and
// HEAD (http.ServeContent), compressed when the client takes gzip. Vary says
// the answer depends on Accept-Encoding wherever a compressed form exists.
// It writes through echo's response, so that the access log and the metrics
// see the real status and size.
func serveStaticFile(c echo.Context, f *staticFile, cacheControl string) {
	h := c.Response().Header()
	h.Set("Cache-Control", cacheControl)
	body, etag := f.body, f.etag
	if f.gz != nil {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
			body, etag = f.gz, f.gzETag
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", etag)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip: named (or
// "*") with a weight above 0 (RFC 9110, 12.5.3).
func acceptsGzip(header string) bool {
	if header == "" {
		return false
	}
	gz, star := -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			gz = q
		case "*":
			star = q
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

// gzipOnce is a body compressed at most once, the first time a client that
// takes gzip asks for it (a seat map's snapshot, encoded once a second).
type gzipOnce struct {
	once sync.Once
	gz   []byte
}

// compressed returns body compressed (nil when that does not make it
// smaller), compressing it on the first call.
func (g *gzipOnce) compressed(body []byte) []byte {
	g.once.Do(func() { g.gz = gzipped(body, gzip.DefaultCompression) })
	return g.gz
}
