package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/stagedoor/stagedoor/internal/shed"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/internal/httpapi"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// The contract is docs/openapi.yaml. Every test server wraps its handler in
// checkContract, so every request an HTTP test sends and every answer it gets
// is checked against the document, in this one place:
//
//   - a request to a path the document does not describe must be answered 404
//     or 405 (paths under /test/, which tests add behind the rings, excepted);
//   - a request the document allows must get an answer the document allows:
//     a status listed for the operation, with the headers and body it describes;
//   - a request the document forbids (tests send many on purpose) must get a 4xx
//     answer, and that answer too must be one the document allows;
//   - an answer that carries the RateLimit headers must be one the document
//     lists them on (an operation it says is unlimited, or limited only in
//     flight, or an answer made before the limits, lists none).
//
// So a route, a field or a status that drifts from the document fails the test
// that made the request.

// contract is the document as the checks use it: a router that finds a
// request's operation, and the bodies' schemas.
type contract struct {
	router routers.Router
	bodies *bodySchemas
}

// loadContract loads and validates (the document's lint) the document, once
// per test binary.
var loadContract = sync.OnceValues(func() (contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		return contract{}, fmt.Errorf("load docs/openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return contract{}, fmt.Errorf("docs/openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	doc.Servers = nil // match any host: test servers listen on ports of their own
	for _, ct := range []string{"text/html", "application/yaml", "text/css", "text/javascript", "application/javascript", "image/png", "text/event-stream", "text/csv"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder) // read as text
	}
	bodies, err := newBodySchemas(docs.OpenAPI, doc)
	if err != nil {
		return contract{}, fmt.Errorf("docs/openapi.yaml's schemas: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	return contract{router, bodies}, err
})

// checkContract wraps a test server's handler; t receives what breaks the contract.
func checkContract(t testing.TB, h http.Handler) http.Handler {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		if r.Body != nil && r.Body != http.NoBody {
			// Teed, not read first: a slow body must reach the server slowly.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &body), r.Body}
		}
		answer := &capture{ResponseWriter: w}
		h.ServeHTTP(answer, r)
		if err := c.checkExchange(r, body.Bytes(), answer); err != nil {
			t.Errorf("contract (docs/openapi.yaml): %s %s → %d: %v\nbody: %.400s", r.Method, r.URL.Path, answer.status(), err, answer.body.Bytes())
		}
	})
}

func (c contract) checkExchange(r *http.Request, body []byte, answer *capture) error {
	if strings.HasPrefix(r.URL.Path, "/test/") {
		return nil
	}
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json") // the server reads every body as JSON
	}
	if rest, ok := strings.CutPrefix(req.URL.Path, "/ui/"); ok && strings.Contains(rest, "/") {
		req.URL.Path = "/ui/file" // the document's /ui/{file}, whose file may hold slashes
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if st := answer.status(); st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
			return fmt.Errorf("the document has no such operation (%v), yet it was answered", err)
		}
		return nil
	}
	// The bodies are checked apart, by c.bodies.
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true}}
	requestErr := openapi3filter.ValidateRequest(context.Background(), in)
	if rb := route.Operation.RequestBody; requestErr == nil && rb != nil && rb.Value != nil {
		switch {
		case len(body) == 0 && rb.Value.Required:
			requestErr = errors.New("the request has no body; the document requires one")
		case len(body) > 0:
			requestErr = c.bodies.check(rb.Value.Content, req.Header, body)
		}
	}
	if requestErr != nil && (answer.status() < 400 || answer.status() >= 500) {
		return fmt.Errorf("a request the document forbids (%v) was answered %d, not a 4xx", requestErr, answer.status())
	}
	answered := answer.body.Bytes()
	if answer.header.Get("Content-Encoding") == "gzip" { // checked as the client reads it
		zr, err := gzip.NewReader(bytes.NewReader(answered))
		if err != nil {
			return fmt.Errorf("the answer says Content-Encoding: gzip, but is not: %w", err)
		}
		if answered, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("the answer says Content-Encoding: gzip, but is not: %w", err)
		}
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 answer.status(),
		Header:                 answer.header,
		Body:                   io.NopCloser(bytes.NewReader(answered)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: true},
	})
	if err == nil {
		resp := route.Operation.Responses.Status(answer.status())
		if resp == nil {
			resp = route.Operation.Responses.Default()
		}
		if resp != nil && resp.Value != nil {
			err = c.bodies.check(resp.Value.Content, answer.header, answered)
		}
	}
	if err != nil {
		return fmt.Errorf("the answer is not one the document allows: %w", err)
	}
	for _, name := range []string{"RateLimit-Policy", "RateLimit"} {
		if answer.header.Get(name) == "" {
			continue
		}
		if resp := route.Operation.Responses.Status(answer.status()); resp == nil || resp.Value == nil || resp.Value.Headers[name] == nil {
			return fmt.Errorf("the answer carries %s: %s, which the document does not list on it", name, answer.header.Get(name))
		}
	}
	return nil
}

// capture passes an answer through to the client and keeps a copy. Unwrap
// lets http.ResponseController reach the connection (the body deadline).
type capture struct {
	http.ResponseWriter
	code   int
	header http.Header
	body   bytes.Buffer
}

func (c *capture) WriteHeader(code int) {
	if c.code == 0 {
		c.code, c.header = code, c.ResponseWriter.Header().Clone()
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.body.Len() < 4<<20 {
		c.body.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *capture) status() int {
	if c.code == 0 {
		return http.StatusOK
	}
	return c.code
}

// TestEveryRouteIsInTheContract: the routes the server answers and the
// operations of docs/openapi.yaml are the same set, both ways.
// TestEveryRouteHasAClass: routes.go gives every route a class for the
// shedders, the one the contract's x-class says; only health checks and
// metrics are exempt.
func TestEveryRouteHasAClass(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]any{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented[method+" "+path] = op.Extensions["x-class"]
		}
	}
	// Exempt: the probes, and a page's files (the shedders decide at the page).
	exempt := map[string]bool{"/healthz": true, "/readyz": true, "/ui/*": true}
	for _, r := range ts.Handler.Routes() {
		if strings.HasPrefix(r[1], "/test/") || r[0] == "echo_route_not_found" {
			continue
		}
		class, ok := ts.Handler.RouteClass(r[0], r[1])
		path := regexp.MustCompile(`:(\w+)`).ReplaceAllString(r[1], "{$1}")
		path = strings.NewReplacer("/ui/*", "/ui/{file}", "/docs/*", "/docs/{file}").Replace(path)
		switch {
		case !ok:
			t.Errorf("%s %s has no class in routes.go", r[0], r[1])
		case (class == shed.Exempt) != exempt[r[1]]:
			t.Errorf("%s %s is %s; only health checks and a page's files are exempt", r[0], r[1], class)
		case documented[r[0]+" "+path] != class.String():
			t.Errorf("%s %s is %s in routes.go, %v in the contract's x-class", r[0], path, class, documented[r[0]+" "+path])
		}
		// The in-flight bound leaves out the exempt routes, and the live seat
		// map, which its row bounds apart (STAGEDOOR_MAX_STREAMS) and which is
		// shed as sheddable.
		if apart := r[1] == "/v1/events/:id/seats/stream"; ts.Handler.Unbounded(r[1]) != (exempt[r[1]] || apart) {
			t.Errorf("%s %s: left out of the in-flight bound: %v", r[0], r[1], ts.Handler.Unbounded(r[1]))
		}
	}
	stream := ts.Handler.RowProtections("GET", "/v1/events/:id/seats/stream")
	if class, _ := ts.Handler.RouteClass("GET", "/v1/events/:id/seats/stream"); class != shed.Sheddable || !slices.Equal(stream, []ratelimit.Name{limits.Streams}) {
		t.Errorf("the stream's row: %s, %v; want sheddable, bounded apart by %s", class, stream, limits.Streams)
	}
	hold := ts.Handler.RowProtections("POST", "/v1/holds")
	if want := []ratelimit.Name{limits.RoomAdmission, limits.HoldBuyer, limits.HoldOrganizer, limits.BuyerConcurrency}; !slices.Equal(hold, want) {
		t.Errorf("a hold's row names %v, want %v", hold, want)
	}
}

func TestEveryRouteIsInTheContract(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, r := range ts.Handler.Routes() {
		if strings.HasPrefix(r[1], "/test/") || r[0] == "echo_route_not_found" {
			continue
		}
		// echo's /v1/holds/:id is the document's /v1/holds/{id}; the page's
		// assets, /docs/*, are /docs/ and /docs/{file}.
		path := regexp.MustCompile(`:(\w+)`).ReplaceAllString(r[1], "{$1}")
		if path == "/ui/*" {
			path = "/ui/{file}"
		}
		if path == "/docs/*" {
			served[r[0]+" /docs/"], served[r[0]+" /docs/{file}"] = true, true
			continue
		}
		served[r[0]+" "+path] = true
	}
	for op := range served {
		if !documented[op] {
			t.Errorf("%s is served but not in docs/openapi.yaml", op)
		}
	}
	for op := range documented {
		if !served[op] {
			t.Errorf("%s is in docs/openapi.yaml but not served", op)
		}
	}
	if len(served) < 30 {
		t.Errorf("only %d routes seen: %v", len(served), served)
	}
}

// TestEveryProblemTypeIsInTheContract: every slug the server can send is in
// the document's catalogue, and each catalogue entry's page answers.
func TestEveryProblemTypeIsInTheContract(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	types := httpapi.ProblemTypes()
	var used [][]string
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used = append(used, regexp.MustCompile(`[Ss]lug: +"([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)...)
	}
	if len(used) < 20 {
		t.Fatalf("found only %d slugs in the code: the pattern no longer matches it", len(used))
	}
	for _, m := range used {
		if _, ok := types[m[1]]; !ok {
			t.Errorf("the code sends problem %q, which docs/openapi.yaml's x-problem-types does not list", m[1])
		}
	}
	for slug, pt := range types {
		if pt.Status < 400 || pt.Title == "" || pt.Description == "" {
			t.Errorf("problem type %s is incomplete: %+v", slug, pt)
		}
		if !strings.Contains(string(docs.OpenAPI), "/problems/"+slug) && slug != "method-not-allowed" && slug != "internal-error" {
			t.Errorf("no response of docs/openapi.yaml names /problems/%s", slug)
		}
		if a := ts.request(t, "GET", "/problems/"+slug, ""); a.StatusCode != 200 || !strings.Contains(string(a.raw), pt.Title) {
			t.Errorf("GET /problems/%s = %d", slug, a.StatusCode)
		}
	}
}

// TestTheContractIsServed: GET /openapi.yaml is the document itself, and
// /docs/ is a page that works offline: everything it loads is served by
// Stagedoor, nothing from another origin.
func TestTheContractIsServed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	if a := ts.request(t, "GET", "/openapi.yaml", ""); a.StatusCode != 200 || !bytes.Equal(a.raw, docs.OpenAPI) {
		t.Errorf("GET /openapi.yaml = %d, %d bytes; want docs/openapi.yaml", a.StatusCode, len(a.raw))
	}
	page := ts.request(t, "GET", "/docs/", "")
	script := regexp.MustCompile(`src="(/ui/v/[0-9a-f]+/js/docs\.js)"`).FindStringSubmatch(string(page.raw)) // its version: uiversion.go
	if page.StatusCode != 200 || script == nil ||
		!strings.Contains(string(ts.request(t, "GET", script[1], "").raw), `"/openapi.yaml"`) {
		t.Fatalf("GET /docs/ = %d %.300s", page.StatusCode, page.raw)
	}
	loads := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page.raw), -1)
	if a := ts.request(t, "GET", "/docs/no-such-file.js", ""); a.StatusCode != 404 || !a.problem(t).is("not-found") {
		t.Errorf("a file the reference lacks = %d %s, want a not-found problem", a.StatusCode, a.raw)
	}
	if len(loads) < 2 {
		t.Fatalf("the page loads %v: expected Swagger UI's script and style", loads)
	}
	for _, m := range loads {
		ref := m[1]
		if strings.Contains(ref, "//") {
			t.Errorf("the page loads %s from another origin", ref)
			continue
		}
		if !strings.HasPrefix(ref, "/") {
			ref = "/docs/" + strings.TrimPrefix(ref, "./")
		}
		if a := ts.request(t, "GET", ref, ""); a.StatusCode != 200 || len(a.raw) == 0 {
			t.Errorf("the page's %s = %d", ref, a.StatusCode)
		}
	}
}
