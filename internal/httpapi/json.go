package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// decodeJSON reads the request body, one JSON object in UTF-8, into v. The
// readBody ring has already read it into memory (at most 64 KiB). Invalid
// UTF-8, unknown fields, fields named in another case than the contract's,
// fields sent twice in one object and trailing data are 400 problems that say
// what is wrong; the strings decoded still pass the text validator where they
// are used.
func decodeJSON(c echo.Context, v any) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return jsonProblem(err)
	}
	return decodeJSONBytes(data, v)
}

// decodeJSONBytes is decodeJSON on a body already read.
func decodeJSONBytes(data []byte, v any) error {
	if !utf8.Valid(data) {
		return errkind.Invalidf("the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errkind.Invalidf("the body must hold exactly one JSON object")
	}
	return checkKeys(data, reflect.TypeOf(v))
}

func jsonProblem(err error) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		maxErr    *http.MaxBytesError
	)
	switch {
	case errors.As(err, &maxErr):
		return errkind.Invalidf("the request body is larger than 64 KiB")
	case errors.Is(err, io.EOF):
		return errkind.Invalidf("the request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errkind.Invalidf("the JSON body ends too soon")
	case errors.As(err, &syntaxErr):
		return errkind.Invalidf("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return errkind.Invalidf("the body must be a JSON object")
		}
		return errkind.Invalidf("field %q must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
	case errors.Is(err, errkind.Invalid): // a field's own decoder said what is wrong (rfc3339)
		return err
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errkind.Invalidf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return errkind.Invalidf("the body is not valid JSON: %v", err)
	}
}

func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int32", "int64", "uint", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	default:
		return "an object"
	}
}

// maxTimeLength is the longest RFC 3339 time a client may send: with
// nanoseconds and an offset, 2006-01-02T15:04:05.999999999+07:00. (Go's parser
// takes any number of fractional digits; the contract states this bound.)
const maxTimeLength = 35

// rfc3339 is a time in a request body, as time.Time decodes it but at most
// maxTimeLength characters long.
type rfc3339 struct{ time.Time }

// UnmarshalJSON refuses a string longer than maxTimeLength, then decodes as time.Time.
func (t *rfc3339) UnmarshalJSON(b []byte) error {
	if len(b) > maxTimeLength+2 { // its quotes
		return errkind.Invalidf("a time (scanned_at) is longer than %d characters, the longest RFC 3339 time", maxTimeLength)
	}
	return t.Time.UnmarshalJSON(b)
}
