package httpapi

import (
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/web"
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
func page(c echo.Context) error {
	return serveStatic(c, web.Static, "index.html")
}

// doorPage serves GET /door: the scanner app of the door staff.
func doorPage(c echo.Context) error {
	c.Response().Header().Set("Content-Security-Policy", doorContentSecurityPolicy)
	return serveStatic(c, web.Static, "door.html")
}

// asset serves GET /ui/{path}: the front end's scripts, styles and images, and
// under /ui/vendor/ the third-party code (web/vendor).
func asset(c echo.Context) error {
	if name, ok := strings.CutPrefix(c.Param("*"), "vendor/"); ok {
		return serveStatic(c, web.Vendor, name)
	}
	return serveStatic(c, web.Static, c.Param("*"))
}

func serveStatic(c echo.Context, files fs.FS, name string) error {
	if strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return errkind.NotFoundf("no file %s", name)
	}
	// Revalidated on each load: a new binary's pages are seen at once.
	c.Response().Header().Set("Cache-Control", "no-cache")
	w := &notFoundCatcher{ResponseWriter: c.Response().Writer}
	http.ServeFileFS(w, c.Request(), files, name)
	if w.notFound {
		return errkind.NotFoundf("no file %s", name)
	}
	return nil
}
