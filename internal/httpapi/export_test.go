package httpapi

import (
	"maps"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/shed"
)

// RouteClass is the class routes.go gave the route of method and path (echo's
// template, such as /v1/holds/:id); false for a route it did not classify.
func (s *Server) RouteClass(method, path string) (shed.Class, bool) {
	class, ok := s.classes[routeKey{method, path}]
	return class, ok
}

// RowProtections are the protections the row of method and path names past
// the outer rings, in order.
func (s *Server) RowProtections(method, path string) []ratelimit.Name {
	return s.rows[routeKey{method, path}]
}

// Unbounded reports whether the in-flight bound leaves the route of path out.
func (s *Server) Unbounded(path string) bool { return s.unbounded[path] }

// ProblemTypes returns the catalogue of every problem Stagedoor sends, by slug.
func ProblemTypes() map[string]ProblemType { return maps.Clone(problemTypes) }

// Routes lists the method and path template (echo's form, such as
// /v1/holds/:id) of every route the server answers, tests' own included.
func (s *Server) Routes() [][2]string {
	var out [][2]string
	for _, r := range s.echo.Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}
