package payrail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBodyBytes is the largest request body read, as in the Stagedoor API.
const maxBodyBytes = 64 << 10

// errNoBody is returned for an empty request body.
var errNoBody = errors.New("request body is empty")

// chargeRequest is the body of POST /charges, validated.
type chargeRequest struct {
	AmountCents int64
	Currency    string
	Token       string
}

// outcome is the charge the token earns, without id, key or time.
func (req chargeRequest) outcome() Charge {
	c := Charge{Status: StatusDeclined, AmountCents: req.AmountCents, Currency: req.Currency}
	switch req.Token {
	case TokenVisa:
		c.Status = StatusSucceeded
	case TokenDeclined:
		c.DeclineReason = "card_declined"
	default:
		c.DeclineReason = "unknown_token"
	}
	return c
}

// decodeChargeRequest reads and validates a POST /charges body. Its errors are
// fit to show the client.
func decodeChargeRequest(w http.ResponseWriter, r *http.Request) (chargeRequest, error) {
	var body struct {
		AmountCents *int64  `json:"amount_cents"`
		Currency    *string `json:"currency"`
		Token       *string `json:"token"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return chargeRequest{}, decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return chargeRequest{}, decodeError(err)
		}
		return chargeRequest{}, errors.New("request body must hold one JSON object")
	}
	switch {
	case body.AmountCents == nil:
		return chargeRequest{}, errors.New("amount_cents is required")
	case *body.AmountCents < 0:
		return chargeRequest{}, errors.New("amount_cents must not be negative")
	case body.Currency == nil || *body.Currency == "":
		return chargeRequest{}, errors.New("currency is required")
	case !isCurrency(*body.Currency):
		return chargeRequest{}, errors.New("currency must be three letters (ISO 4217)")
	case body.Token == nil || *body.Token == "":
		return chargeRequest{}, errors.New("token is required")
	}
	return chargeRequest{
		AmountCents: *body.AmountCents,
		Currency:    strings.ToUpper(*body.Currency),
		Token:       *body.Token,
	}, nil
}

// decodeError turns a JSON decoding error into one fit for the client.
func decodeError(err error) error {
	var maxErr *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxErr):
		return fmt.Errorf("request body is over %d KiB", maxBodyBytes>>10)
	case errors.Is(err, io.EOF):
		return errNoBody
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return errors.New("request body must be a JSON object")
	case errors.As(err, &typeErr):
		return fmt.Errorf("field %s has the wrong type", typeErr.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return errors.New("request body is not valid JSON")
}

// isCurrency reports whether s is three ASCII letters.
func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// errorBody is the JSON body of every error response.
func errorBody(msg string) map[string]string { return map[string]string{"error": msg} }

// writeJSON writes v as the JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// redactToken is how a payment token appears in the log: a test token by its
// name, any other as "other". A payment token is a secret, and a short hash of
// one is as good as the token to whoever can try every card number against it:
// the log holds neither.
func redactToken(token string) string {
	switch token {
	case TokenVisa, TokenDeclined, TokenError:
		return token
	}
	return "other"
}
