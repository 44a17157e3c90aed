package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// TestDecodingProblems: every way a JSON body can be wrong is a 400
// invalid-request whose detail says what is wrong.
func TestDecodingProblems(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, body, detail string }{
		{"malformed JSON", `{"name":`, "ends too soon"},
		{"syntax error", `{"name" "x"}`, "malformed JSON"},
		{"unknown field", `{"name":"x","admin":true}`, `unknown field "admin"`},
		{"wrong type", `{"count":"many"}`, `"count" must be a number`},
		{"empty body", ``, "empty"},
		{"two objects", `{} {}`, "exactly one"},
		{"not an object", `[1,2]`, "object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := echo.New().NewContext(httptest.NewRequest("POST", "/", strings.NewReader(tt.body)), httptest.NewRecorder())
			var in struct {
				Name  string `json:"name"`
				Count int    `json:"count"`
			}
			p, known := problemFor(decodeJSON(c, &in))
			if !known || p.Status != 400 || p.Slug != "invalid-request" || !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("problem %+v, want 400 invalid-request saying %q", p, tt.detail)
			}
		})
	}
}

// TestErrorTable: what each kind and each named error becomes, and that a 5xx
// never shows the error's own text.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		err        error
		slug       string
		status     int
		retryAfter time.Duration
		member     string // an extension member the problem must carry
	}{
		{"invalid", errkind.Invalidf("seat_ids must list 1 to 10 seats"), "invalid-request", 400, 0, ""},
		{"not found", fmt.Errorf("wrapped: %w", errkind.NotFoundf("no such hold")), "not-found", 404, 0, ""},
		{"unauthorized", errkind.Unauthorizedf("send a token"), "unauthorized", 401, 0, ""},
		{"forbidden", errkind.Forbiddenf("buyers only"), "forbidden", 403, 0, ""},
		{"unavailable", errkind.Unavailablef("down"), "service-unavailable", 503, time.Second, ""},
		{"database dropped the connection", &pgconn.PgError{Code: "57P01", Message: "terminating connection"},
			"service-unavailable", 503, time.Second, ""},
		{"email taken", auth.ErrEmailTaken, "email-taken", 409, 0, ""},
		{"wrong password", auth.ErrInvalidCredentials, "invalid-credentials", 401, 0, ""},
		{"seats taken", &hold.UnavailableError{SeatIDs: []string{"s1"}}, "seats-unavailable", 409, 0, "unavailable_seat_ids"},
		{"not on sale", hold.ErrNotOnSale, "not-on-sale", 409, 0, ""},
		{"event started", fmt.Errorf("checkout: begin: %w", hold.ErrEventStarted), "event-started", 409, 0, ""},
		{"seats given back moments ago", &hold.CooldownError{SeatIDs: []string{"s1"}, RetryAfter: 42 * time.Second},
			"rehold-cooldown", 409, 42 * time.Second, "cooldown_seat_ids"},
		{"hold not active", fmt.Errorf("%w: it expired", hold.ErrNotActive), "hold-not-active", 409, 0, ""},
		{"no waiting room", waitroom.ErrNoRoom, "no-waiting-room", 404, 0, ""},
		{"not admitted", waitroom.ErrNotAdmitted, "not-admitted", 403, 0, ""},
		{"waiting room unreachable", waitroom.ErrUnavailable, "service-overloaded", 503, waitroom.RetryAfter, "bound"},
		{"declined", &checkout.OrderError{OrderID: "o1", Err: checkout.ErrPaymentDeclined}, "payment-declined", 402, 0, "order_id"},
		{"payment unavailable", checkout.ErrPaymentUnavailable, "payment-unavailable", 503, checkout.PaymentRetryAfter, ""},
		{"order released", &checkout.OrderError{OrderID: "o1", Err: checkout.ErrOrderReleased}, "order-released", 409, 0, "order_id"},
		{"key in progress", checkout.ErrIdempotencyInProgress, "idempotency-in-progress", 409, 0, ""},
		{"key reused", checkout.ErrIdempotencyMismatch, "idempotency-mismatch", 422, 0, ""},
		{"already scanned", &scan.Rejection{Result: scan.AlreadyScanned}, "scan-rejected", 409, 0, "result"},
		{"unknown code", &scan.Rejection{Result: scan.Invalid}, "scan-rejected", 404, 0, "result"},
		{"no buyer has the email", fmt.Errorf("scan: %w", auth.ErrNoSuchBuyer), "recipient-not-found", 404, 0, ""},
		{"ticket scanned", &scan.NotTransferableError{Reason: scan.ReasonScanned}, "ticket-not-transferable", 409, 0, "ticket_status"},
		{"anything else", errors.New(`pq: relation "secret_table" does not exist`), "internal-error", 500, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := problemFor(tt.err)
			if p.Slug != tt.slug || p.Status != tt.status || p.RetryAfter != tt.retryAfter {
				t.Errorf("problem %s %d Retry-After %s, want %s %d %s", p.Slug, p.Status, p.RetryAfter, tt.slug, tt.status, tt.retryAfter)
			}
			if _, ok := problemTypes[p.Slug]; !ok {
				t.Errorf("slug %s has no problem page", p.Slug)
			}
			if tt.member != "" && p.Extensions[tt.member] == nil {
				t.Errorf("problem %+v lacks %s", p, tt.member)
			}
			if p.Status >= 500 && strings.Contains(p.Detail, tt.err.Error()) {
				t.Errorf("a %d shows the error's text: %q", p.Status, p.Detail)
			}
		})
	}
}

// problemDocument, written by hand for speed, says exactly what encoding/json
// says of the same problem as a map (HTML left unescaped), whatever its text.
func TestProblemDocumentIsTheJSONOfItsMembers(t *testing.T) {
	for _, p := range []*Problem{
		{Slug: "rate-limited", Status: 429, Detail: "limit hold-buyer (10/1m) refused this request; retry in 5994 ms",
			Extensions: map[string]any{"limit": ratelimit.Name("hold-buyer"), "violated-policies": []ratelimit.Name{"hold-buyer", "hold-organizer"}, "retry_after_ms": int64(5994)}},
		{Slug: "invalid-request", Status: 400, Detail: "quote \" backslash \\ <admin token> & tab\t nl\n bell\a ünï \u2028 \xff end"},
		{Slug: "scan-rejected", Status: 409, Detail: "already", Extensions: map[string]any{
			"result": "already_scanned", "first_scanned_at": time.Date(2026, 11, 30, 12, 0, 0, 123, time.UTC), "ticket_id": "t", "n": 3}},
		{Slug: "seats-unavailable", Status: 409, Detail: "", Extensions: map[string]any{"unavailable_seat_ids": []string{"a", "b"}}},
	} {
		body := make(map[string]any, 4+len(p.Extensions))
		for k, v := range p.Extensions {
			body[k] = v
		}
		body["type"], body["title"], body["status"], body["detail"] = "/problems/"+p.Slug, problemTypes[p.Slug].Title, p.Status, p.Detail
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(body); err != nil {
			t.Fatal(err)
		}
		if got := string(problemDocument(p)); got != want.String() {
			t.Errorf("problemDocument:\n got %s\nwant %s", got, want.String())
		}
	}
}
