package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPI serves GET /openapi.yaml: the contract, docs/openapi.yaml, as built
// into the binary (compressed once, with its ETag).
func (s *Server) openAPI(c echo.Context) error {
	serveStaticFile(c, s.contract, "no-cache")
	return nil
}

// apiReference serves GET /docs/ and its assets: Swagger UI, embedded in the
// binary (github.com/swaggest/swgui, its files compressed when it was built),
// started by web/static/js/docs.js on /openapi.yaml. Nothing is fetched from
// the internet, so the page works offline. A file it does not have is a
// not-found problem, like any other.
func (s *Server) apiReference(c echo.Context) error {
	c.Response().Header().Set("Content-Security-Policy", docsContentSecurityPolicy)
	if p := c.Param("*"); p != "" && p != "index.html" {
		return s.serveFile(c, s.reference, p)
	}
	// Our own page: Swagger UI's would start it with an inline script.
	return s.serveFile(c, s.static, "docs.html")
}

// toAPIReference serves GET /docs: the reference is at /docs/.
func toAPIReference(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, "/docs/")
}
