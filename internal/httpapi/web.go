package httpapi

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// contentSecurityPolicy is sent with every answer: scripts, styles, images and
// connections from this origin only; no inline script, no plugin, no framing.
// The pages are written for it (no inline script or style attribute).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// docsContentSecurityPolicy is the API reference's: Swagger UI sets inline
// styles, so style-src allows them there; scripts stay this origin's only.
var docsContentSecurityPolicy = strings.Replace(contentSecurityPolicy, "style-src 'self'", "style-src 'self' 'unsafe-inline'", 1)

// securityHeaderValues are the usual security headers, by canonical name, each
// value a slice made once: every answer shares them (nothing appends to a
// header that is set whole), so a flood of refusals does not allocate them.
var securityHeaderValues = map[string][]string{
	"Content-Security-Policy":    {contentSecurityPolicy},
	"X-Content-Type-Options":     {"nosniff"},
	"X-Frame-Options":            {"DENY"},
	"Referrer-Policy":            {"no-referrer"},
	"Cross-Origin-Opener-Policy": {"same-origin"},
	"Permissions-Policy":         {"camera=(self), microphone=(), geolocation=(), payment=()"},
}

// securityHeaders is the ring that puts the usual security headers on every
// answer, pages and API alike.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		for name, value := range securityHeaderValues {
			h[name] = value
		}
		return next(c)
	}
}

// doorContentSecurityPolicy is the door page's: its QR decoder is
// WebAssembly, which a browser compiles only under 'wasm-unsafe-eval' (that
// allows WebAssembly, not JavaScript's eval).
var doorContentSecurityPolicy = strings.Replace(contentSecurityPolicy, "script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", 1)

// page serves GET /: the front end's one HTML page (it routes by the URL's
// fragment, so every view is this page).
func (s *Server) page(c echo.Context) error {
	return s.serveFile(c, s.static, "index.html")
}

// doorPage serves GET /door: the scanner app of the door staff.
func (s *Server) doorPage(c echo.Context) error {
	c.Response().Header().Set("Content-Security-Policy", doorContentSecurityPolicy)
	return s.serveFile(c, s.static, "door.html")
}

// asset serves GET /ui/{path}: the front end's scripts, styles and images, and
// under /ui/vendor/ the third-party code (web/vendor), each also under
// /ui/v/{version}/ (uiversion.go): kept a year under the version in force,
// revalidated otherwise. A directory, /ui/ itself included, is no file: 404.
func (s *Server) asset(c echo.Context) error {
	name, current := unversioned(c.Param("*"), s.uiVersion)
	cache := "no-cache"
	if current {
		cache = immutableCache
	}
	if vendored, ok := strings.CutPrefix(name, "vendor/"); ok {
		return s.serveFileCached(c, s.vendor, vendored, cache)
	}
	return s.serveFileCached(c, s.static, name, cache)
}

// serveFile answers the file name of files (staticFiles: ETag, gzip), or a
// not-found problem, revalidated on each load (no-cache): a new binary's
// pages are seen at once, and an unchanged file costs a 304.
func (s *Server) serveFile(c echo.Context, files *staticFiles, name string) error {
	return s.serveFileCached(c, files, name, "no-cache")
}

// serveFileCached is serveFile with the answer's Cache-Control.
func (s *Server) serveFileCached(c echo.Context, files *staticFiles, name, cacheControl string) error {
	f, err := files.file(name)
	if err != nil {
		return err
	}
	if f == nil {
		return errkind.NotFoundf("no file %s", c.Request().URL.Path)
	}
	serveStaticFile(c, f, cacheControl)
	return nil
}
