package httpapi

import (
	"net/http"
	"sync"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// Answers are compressed with gzip for a client that takes it, by klauspost's
// gzhttp, when their type is text (JSON, problems, HTML, YAML, …) and they are
// at least compressMin bytes: below that, gzip's own header and a packet's
// round trip leave nothing to gain. gzhttp says Vary: Accept-Encoding on
// every answer of such a route and adds "-gzip" to an ETag of a compressed
// answer (another representation, another tag).
//
// The ring is the last one of a read's row, just before its handler: a
// request refused on the way (a limit, a lease, the authentication) costs it
// nothing, and a write's row has none. Routes whose handlers choose the encoding themselves (ownEncoding
// on their rows) are never wrapped: the static files and seat maps, which are
// compressed once and kept (static.go, seatmapjson.go), and the live seat
// map, a stream of server-sent events that must reach each watcher unbuffered
// (and a compressor's state per watcher would cost its memory a connection).

// compressedTypes are the types worth compressing.
var compressedTypes = []string{
	"application/json", "application/problem+json", "application/yaml", "application/javascript",
	"text/html", "text/plain", "text/css", "text/csv", "text/javascript", "image/svg+xml",
}

// gzipAnswers wraps an http.Handler in gzhttp with Stagedoor's settings.
var gzipAnswers = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(compressMin),
		gzhttp.CompressionLevel(gzip.DefaultCompression),
		gzhttp.ContentTypes(compressedTypes),
		gzhttp.EnableZstd(false), // gzip only, as the static files: every client takes it
		gzhttp.SuffixETag("-gzip"),
	)
	if err != nil {
		panic(err) // the options above are valid
	}
	return wrap
}()

// ownEncoding is the step of a route whose handler chooses its answer's
// encoding itself: the compression ring is not put on its row.
var ownEncoding = step{ownEncoding: true}

// compressAnswers is the compression ring (see the top of this file), on the
// rows of reads (GET) only: writes are what floods of refusals are made of
// (holds, checkouts, logins), and their answers are small, so a write's row
// has no ring to pass. The handler writes through gzhttp's writer, which
// compresses or not as it sees the answer's type and size; a client that
// does not take gzip is answered without it, and without a wrapper.
func compressAnswers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
			c.Response().Header().Add("Vary", "Accept-Encoding") // a read's answer varies by it
			return next(c)
		}
		call := gzipCalls.Get().(*gzipCall)
		call.ResponseWriter, call.c, call.next = c.Response().Writer, c, next
		gzipHandler.ServeHTTP(call, c.Request())
		err := call.err
		*call = gzipCall{}
		gzipCalls.Put(call)
		return err
	}
}

// gzipCall is one request on its way through gzhttp: the response's own
// writer, which gzhttp's writes to, and the echo context and handler that
// gzipHandler finds again by unwrapping the writer gzhttp gives it. Pooled,
// so that a request costs no closure.
type gzipCall struct {
	http.ResponseWriter
	c    echo.Context
	next echo.HandlerFunc
	err  error
}

// Unwrap is the response's own writer (http.ResponseController follows it).
func (g *gzipCall) Unwrap() http.ResponseWriter { return g.ResponseWriter }

var gzipCalls = sync.Pool{New: func() any { return new(gzipCall) }}

// gzipHandler runs a call's handler with gzhttp's writer as the response's.
var gzipHandler = gzipAnswers(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	call := callOf(w)
	res := call.c.Response()
	res.Writer = w
	defer func() { res.Writer = call.ResponseWriter }() // a panic too leaves the response's own writer
	call.err = call.next(call.c)
}))

// callOf finds the call in the writer gzhttp wraps around it.
func callOf(w http.ResponseWriter) *gzipCall {
	for {
		if call, ok := w.(*gzipCall); ok {
			return call
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			panic("httpapi: gzhttp's writer does not unwrap to its call")
		}
		w = u.Unwrap()
	}
}
