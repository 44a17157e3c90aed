package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/swaggest/swgui/v5emb"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/web"
)

// openAPI serves GET /openapi.yaml: the contract, docs/openapi.yaml, as built
// into the binary.
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", docs.OpenAPI)
}

// apiReference serves GET /docs/ and its assets: Swagger UI, embedded in the
// binary (github.com/swaggest/swgui), started by web/static/js/docs.js on
// /openapi.yaml. Nothing is fetched
// from the internet, so the page works offline. A file it does not have is a
// not-found problem, like any other.
func apiReference() echo.HandlerFunc {
	ui := v5emb.New("Stagedoor API", "/openapi.yaml", "/docs/")
	return func(c echo.Context) error {
		c.Response().Header().Set("Content-Security-Policy", docsContentSecurityPolicy)
		if p := c.Param("*"); p == "" || p == "index.html" {
			// Our own page: Swagger UI's would start it with an inline script.
			return serveStatic(c, web.Static, "docs.html")
		}
		w := &notFoundCatcher{ResponseWriter: c.Response().Writer}
		ui.ServeHTTP(w, c.Request())
		if w.notFound {
			return errkind.NotFoundf("the API reference has no file %s", c.Request().URL.Path)
		}
		return nil
	}
}

// toAPIReference serves GET /docs: the reference is at /docs/.
func toAPIReference(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, "/docs/")
}

// notFoundCatcher passes an answer through, unless it is a 404, which it
// swallows and notes, so that the caller answers a problem instead.
type notFoundCatcher struct {
	http.ResponseWriter
	notFound bool
}

func (w *notFoundCatcher) WriteHeader(code int) {
	if code == http.StatusNotFound {
		w.notFound = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *notFoundCatcher) Write(p []byte) (int, error) {
	if w.notFound {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}
