package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// bodySchemas checks request and response bodies against the document's
// schemas, each compiled once (JSON Schema 2020-12, the dialect of an OpenAPI
// 3.1 document) and kept. kin-openapi checks the rest of an exchange (route,
// parameters, status, headers), but for a 3.1 document it compiles a schema
// anew for every body it validates: a quarter of this package's CPU, measured
// with -cpuprofile.
type bodySchemas struct {
	compiler *jsonschema.Compiler
	// where maps a media type of the loaded document to its schema's place in
	// the document, as a JSON pointer.
	where    map[*openapi3.MediaType]string
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// documentURL names the document among the compiler's resources.
const documentURL = "urn:stagedoor:openapi"

// newBodySchemas reads raw (the document's YAML) for the compiler and finds,
// in doc (the same document loaded), every media type's schema.
func newBodySchemas(raw []byte, doc *openapi3.T) (*bodySchemas, error) {
	var tree any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	asJSON, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(asJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Formats are asserted as kin-openapi asserts them: those of its registry
	// (date, date-time, byte, int32, int64) and no others (an e-mail address
	// with spaces around it is the server's to trim, not a broken contract).
	for _, name := range formatsIn(value, map[string]bool{}) {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: kinFormat(name)})
	}
	c.AssertFormat()
	if err := c.AddResource(documentURL, value); err != nil {
		return nil, err
	}
	b := &bodySchemas{compiler: c, where: map[*openapi3.MediaType]string{}, compiled: map[string]*jsonschema.Schema{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := "/paths/" + escape(path) + "/" + strings.ToLower(method)
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				b.place(refOr(rb.Ref, at+"/requestBody"), rb.Value.Content)
			}
			for status, r := range op.Responses.Map() {
				if r.Value != nil {
					b.place(refOr(r.Ref, at+"/responses/"+escape(status)), r.Value.Content)
				}
			}
		}
	}
	return b, nil
}

// formatsIn lists the formats named in node, each once.
func formatsIn(node any, seen map[string]bool) []string {
	var names []string
	switch node := node.(type) {
	case map[string]any:
		if name, ok := node["format"].(string); ok && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		for _, v := range node {
			names = append(names, formatsIn(v, seen)...)
		}
	case []any:
		for _, v := range node {
			names = append(names, formatsIn(v, seen)...)
		}
	}
	return names
}

// kinFormat checks a value of format name as kin-openapi's registry does:
// strings by its string formats, whole numbers by its integer formats.
func kinFormat(name string) func(any) error {
	return func(v any) error {
		switch v := v.(type) {
		case string:
			if f, ok := openapi3.SchemaStringFormats[name]; ok {
				return f.Validate(v)
			}
		case json.Number:
			if n, err := v.Int64(); err == nil {
				if f, ok := openapi3.SchemaIntegerFormats[name]; ok {
					return f.Validate(n)
				}
			}
		}
		return nil
	}
}

// place notes where each of content's schemas is, under pointer at.
func (b *bodySchemas) place(at string, content openapi3.Content) {
	for mediaType, mt := range content {
		if mt != nil && mt.Schema != nil {
			b.where[mt] = at + "/content/" + escape(mediaType) + "/schema"
		}
	}
}

// refOr is the JSON pointer of a component ref ("#/components/…"), else at.
func refOr(ref, at string) string {
	if p, ok := strings.CutPrefix(ref, "#"); ok {
		return p
	}
	return at
}

// pointerToken escapes a JSON pointer's token (RFC 6901).
var pointerToken = strings.NewReplacer("~", "~0", "/", "~1")

// escape makes s one token of a JSON pointer.
func escape(s string) string { return pointerToken.Replace(s) }

// schema returns mt's compiled schema, compiling it the first time.
func (b *bodySchemas) schema(mt *openapi3.MediaType) (*jsonschema.Schema, error) {
	at, ok := b.where[mt]
	if !ok {
		return nil, fmt.Errorf("the contract check found no place in the document for a media type")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.compiled[at]; ok {
		return s, nil
	}
	s, err := b.compiler.Compile(documentURL + "#" + at)
	if err != nil {
		return nil, fmt.Errorf("compile the schema at %s: %w", at, err)
	}
	b.compiled[at] = s
	return s, nil
}

// check reports whether body, sent with header, is one of content's: a media
// type it lists, and a value its schema allows. What is checked is what
// kin-openapi checks when it validates a body.
func (b *bodySchemas) check(content openapi3.Content, header http.Header, body []byte) error {
	if len(content) == 0 {
		return nil
	}
	mt := content.Get(header.Get("Content-Type"))
	if mt == nil {
		return fmt.Errorf("the content type %q is not one the document lists", header.Get("Content-Type"))
	}
	if mt.Schema == nil {
		return nil
	}
	value, err := decodeBody(mt, header, body)
	if err != nil {
		return err
	}
	s, err := b.schema(mt)
	if err != nil {
		return err
	}
	return s.Validate(value)
}

// decodeBody reads a body as kin-openapi would: JSON as JSON (its numbers
// exact), every other content type with the decoder registered for it (pages,
// files and streams as text), and one without a decoder (an image) as text.
func decodeBody(mt *openapi3.MediaType, header http.Header, body []byte) (any, error) {
	contentType := header.Get("Content-Type")
	mediaType, _, _ := strings.Cut(contentType, ";")
	mediaType = strings.TrimSpace(mediaType)
	if mediaType == "application/json" || strings.HasSuffix(mediaType, "+json") {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("the body is not JSON: %w", err)
		}
		return v, nil
	}
	decode := openapi3filter.RegisteredBodyDecoder(mediaType)
	if decode == nil {
		return string(body), nil // a file (an image), as kin-openapi reads a binary body
	}
	return decode(bytes.NewReader(body), header, mt.Schema, func(name string) *openapi3.Encoding { return mt.Encoding[name] })
}

// TestTheContractCheckCatchesADriftedBody: the check passes the server's own
// answer and a request the document allows, and fails each when a field
// drifts from the document: a type, a format, a required field, an enum.
func TestTheContractCheckCatchesADriftedBody(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	id, _ := newEvent(t, ts, org, eventBody(1, 2))
	real := ts.request(t, "GET", "/v1/events/"+id, "")
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	answered := func(body []byte) error {
		a := &capture{code: real.StatusCode, header: real.Header.Clone()}
		a.header.Del("Content-Encoding")
		a.body.Write(body)
		return c.checkExchange(httptest.NewRequest("GET", "/v1/events/"+id, nil), nil, a)
	}
	if err := answered(real.raw); err != nil {
		t.Fatalf("the server's own answer fails the check: %v", err)
	}
	signup := func(body string) error {
		a := &capture{code: http.StatusCreated, header: http.Header{"Content-Type": {"application/json"}}}
		a.body.WriteString(`{"id":"6269b76b-8484-4852-a84b-131101f91767","email":"ada@example.com","name":"Ada"}`)
		return c.checkExchange(httptest.NewRequest("POST", "/v1/buyers", strings.NewReader(body)), []byte(body), a)
	}
	if err := signup(`{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); err != nil {
		t.Fatalf("a sign-up the document allows fails the check: %v", err)
	}
	for name, drift := range map[string]func(map[string]any){
		"a name that is a number":      func(e map[string]any) { e["name"] = 7 },
		"a start that is no date-time": func(e map[string]any) { e["starts_at"] = "tomorrow" },
		"no id":                        func(e map[string]any) { delete(e, "id") },
		"a status it does not list":    func(e map[string]any) { e["status"] = "postponed" },
	} {
		var e map[string]any
		if err := json.Unmarshal(real.raw, &e); err != nil {
			t.Fatal(err)
		}
		drift(e)
		body, _ := json.Marshal(e)
		if err := answered(body); err == nil {
			t.Errorf("an event with %s passes the check", name)
		}
	}
	if err := signup(`{"email":5,"password":"correct horse","name":"Ada"}`); err == nil {
		t.Error("a sign-up with a number for its e-mail, answered 201, passes the check")
	}
	if err := signup(``); err == nil {
		t.Error("a sign-up with no body, answered 201, passes the check")
	}
}
