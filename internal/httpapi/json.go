package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// decodeJSON reads the request body, one JSON object, into v. Unknown fields,
// trailing data and bodies over 64 KiB are 400 problems that say what is wrong.
func decodeJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return jsonProblem(err)
		}
		return errkind.Invalidf("the body must hold exactly one JSON object")
	}
	return nil
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
