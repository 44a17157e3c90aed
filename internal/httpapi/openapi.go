package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/swaggest/swgui/v5emb"

	"github.com/stagedoor/stagedoor/docs"
)

// openAPI serves GET /openapi.yaml: the contract, docs/openapi.yaml, as built
// into the binary.
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", docs.OpenAPI)
}

// apiReference serves GET /docs/ and its assets: Swagger UI, embedded in the
// binary (github.com/swaggest/swgui), reading /openapi.yaml. Nothing is fetched
// from the internet, so the page works offline.
func apiReference() echo.HandlerFunc {
	return echo.WrapHandler(v5emb.New("Stagedoor API", "/openapi.yaml", "/docs/"))
}
