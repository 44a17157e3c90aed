package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"

	"github.com/stagedoor/stagedoor/docs"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/queuetoken"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// Problem is an RFC 9457 problem, the body of every error response.
type Problem struct {
	Slug   string
	Status int
	Detail string
	// Extensions are extra members, such as "limit" or "unavailable_seat_ids".
	Extensions map[string]any
	// RetryAfter, when positive, is sent as Retry-After in whole seconds, rounded up.
	RetryAfter time.Duration
}

func (p *Problem) Error() string { return p.Slug + ": " + p.Detail }

// ProblemType is one entry of the catalogue that GET /problems/{slug} serves.
type ProblemType struct {
	Status      int    `yaml:"status"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
}

// problemTypes lists every problem Stagedoor sends, by slug. It is the
// catalogue of the OpenAPI document (components.x-problem-types), so that the
// contract and the pages of GET /problems/{slug} are one table.
var problemTypes = mustProblemTypes(docs.OpenAPI)

func mustProblemTypes(openapi []byte) map[string]ProblemType {
	var doc struct {
		Components struct {
			ProblemTypes map[string]ProblemType `yaml:"x-problem-types"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(openapi, &doc); err != nil {
		panic(fmt.Errorf("httpapi: read the problem types of docs/openapi.yaml: %w", err))
	}
	if len(doc.Components.ProblemTypes) == 0 {
		panic("httpapi: docs/openapi.yaml lists no problem types (components.x-problem-types)")
	}
	return doc.Components.ProblemTypes
}

// errorProblems maps errors to problems, in one place, the first match
// winning: first the named errors a client must tell apart from their kind,
// then the kinds every package wraps (internal/errkind). An error that matches
// none is a 500 and its text is only logged. The detail of a 4xx is the error's
// own text, written for the client. status, when set, overrides the type's
// status; retryAfter, when set, is sent as Retry-After.
var errorProblems = []struct {
	err        error
	slug       string
	status     int
	retryAfter time.Duration
}{
	// Named: the same kind, but a client acts on the difference.
	{err: auth.ErrEmailTaken, slug: "email-taken"},
	{err: auth.ErrInvalidCredentials, slug: "invalid-credentials"},
	{err: auth.ErrNoSuchBuyer, slug: "recipient-not-found"},
	{err: hold.ErrSeatsUnavailable, slug: "seats-unavailable"}, // + unavailable_seat_ids, see problemExtensions
	{err: hold.ErrTooManyHeld, slug: "too-many-seats-held"},    // + max_held_seats, seats_held
	{err: hold.ErrNotOnSale, slug: "not-on-sale"},
	{err: hold.ErrEventStarted, slug: "event-started"},
	{err: event.ErrCancelled, slug: "event-cancelled"},
	{err: event.ErrBreaksTickets, slug: "change-breaks-tickets"},
	{err: event.ErrImageTooLarge, slug: "image-too-large"},
	{err: event.ErrImageType, slug: "unsupported-image-type"},
	{err: hold.ErrReholdCooldown, slug: "rehold-cooldown"}, // + cooldown_seat_ids, Retry-After
	{err: hold.ErrSoldOut, slug: "sold-out"},               // + sold_out_sections
	{err: hold.ErrNotActive, slug: "hold-not-active"},
	{err: waitroom.ErrNoRoom, slug: "no-waiting-room"},
	{err: waitroom.ErrNotAdmitted, slug: "not-admitted"},
	{err: waitroom.ErrUnavailable, slug: "service-overloaded", retryAfter: waitroom.RetryAfter},
	{err: queuetoken.ErrInvalid, slug: "invalid-queue-token"},
	{err: checkout.ErrPaymentDeclined, slug: "payment-declined"}, // + order_id
	{err: checkout.ErrPaymentUnavailable, slug: "payment-unavailable", retryAfter: checkout.PaymentRetryAfter},
	{err: checkout.ErrOrderReleased, slug: "order-released"},
	{err: checkout.ErrOrderRefunded, slug: "order-refunded"}, // + order_id
	{err: checkout.ErrRefundWindowClosed, slug: "refund-window-closed"},
	{err: checkout.ErrRefundRefused, slug: "refund-refused"},    // + order_id
	{err: scan.ErrNotRefundable, slug: "ticket-not-refundable"}, // + not_refundable_ticket_ids
	{err: checkout.ErrIdempotencyInProgress, slug: "idempotency-in-progress"},
	{err: checkout.ErrIdempotencyMismatch, slug: "idempotency-mismatch"},
	{err: scan.ErrAlreadyScanned, slug: "scan-rejected"},                       // + result, first_scanned_at
	{err: scan.ErrWrongEvent, slug: "scan-rejected"},                           // + result
	{err: scan.ErrRevoked, slug: "scan-rejected"},                              // + result
	{err: scan.ErrInvalid, slug: "scan-rejected", status: http.StatusNotFound}, // + result
	{err: scan.ErrNotTransferable, slug: "ticket-not-transferable"},            // + ticket_status
	// The kinds.
	{err: errkind.Invalid, slug: "invalid-request"},
	{err: errkind.NotFound, slug: "not-found"},
	{err: errkind.Unauthorized, slug: "unauthorized"},
	{err: errkind.Forbidden, slug: "forbidden"},
	{err: errkind.Unavailable, slug: "service-unavailable", retryAfter: time.Second},
}

// problemExtensions are the members an error of errorProblems carries beyond
// its detail, such as the seats a refused hold could not take.
func problemExtensions(err error) map[string]any {
	if errors.Is(err, waitroom.ErrUnavailable) {
		return boundMember("waiting_room")
	}
	var rejected *scan.Rejection
	if errors.As(err, &rejected) {
		return scanRejectionMembers(rejected)
	}
	var notTransferable *scan.NotTransferableError
	if errors.As(err, &notTransferable) {
		return map[string]any{"ticket_status": notTransferable.Reason}
	}
	var unavailable *hold.UnavailableError
	if errors.As(err, &unavailable) {
		return map[string]any{"unavailable_seat_ids": unavailable.SeatIDs}
	}
	var tooMany *hold.TooManyHeldError
	if errors.As(err, &tooMany) {
		return map[string]any{"max_held_seats": tooMany.Max, "seats_held": tooMany.Held}
	}
	var cooling *hold.CooldownError
	if errors.As(err, &cooling) {
		return map[string]any{"cooldown_seat_ids": cooling.SeatIDs}
	}
	var refused *scan.NotRefundableError
	if errors.As(err, &refused) && len(refused.TicketIDs) > 0 {
		return map[string]any{"not_refundable_ticket_ids": refused.TicketIDs}
	}
	var soldOut *hold.SoldOutError
	if errors.As(err, &soldOut) {
		return map[string]any{"sold_out_sections": soldOutSections(soldOut)}
	}
	var order *checkout.OrderError
	if errors.As(err, &order) {
		return map[string]any{"order_id": order.OrderID}
	}
	return nil
}

// retryAfterOf is the wait an error names itself, for its Retry-After; 0 for
// none (the table's then applies).
func retryAfterOf(err error) time.Duration {
	var cooling *hold.CooldownError
	if errors.As(err, &cooling) {
		return max(cooling.RetryAfter, time.Second)
	}
	return 0
}

// problemFor turns any error a handler returned into the problem to send.
func problemFor(err error) (*Problem, bool) {
	var p *Problem
	if errors.As(err, &p) {
		return p, true
	}
	if conn.Unavailable(err) {
		err = errkind.Unavailablef("%w", err) // PostgreSQL's outage, as its store reported it
	}
	for _, e := range errorProblems {
		if errors.Is(err, e.err) {
			t := problemTypes[e.slug]
			p := &Problem{Slug: e.slug, Status: cmp.Or(e.status, t.Status), Detail: err.Error(),
				Extensions: problemExtensions(err), RetryAfter: cmp.Or(retryAfterOf(err), e.retryAfter)}
			if p.Status >= 500 {
				p.Detail = t.Description // the error itself may name internals; it is logged
			}
			return p, true
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return &Problem{Slug: "not-found", Status: 404, Detail: "no route matches this path"}, true
		case http.StatusMethodNotAllowed:
			return &Problem{Slug: "method-not-allowed", Status: 405, Detail: "this path does not accept this method"}, true
		case http.StatusRequestEntityTooLarge:
			return &Problem{Slug: "invalid-request", Status: 400, Detail: "the request body is larger than 64 KiB"}, true
		case http.StatusUnsupportedMediaType, http.StatusBadRequest:
			return &Problem{Slug: "invalid-request", Status: 400, Detail: fmt.Sprint(he.Message)}, true
		}
	}
	return &Problem{Slug: "internal-error", Status: 500, Detail: "an unexpected error occurred; the request id identifies it in our logs"}, false
}

// reportedElsewhere are the 5xx problems that are not logged a line each: the
// bounds count them in stagedoor_shed_total, the payment provider's outage is
// logged by checkout as one outage (a WARN line with a count every 10 s), and
// the database's by handleError the same way.
var reportedElsewhere = map[string]bool{"service-overloaded": true, "payment-unavailable": true, "service-unavailable": true}

// boundMember is the "bound" member of a 503 service-overloaded: which bound
// refused (in_flight, stream, checkout, connections, waiting_room, or a load
// shedder's name), so that a client or a load tool can tell them apart.
func boundMember(bound string) map[string]any { return map[string]any{"bound": bound} }

// refusedBy names the protection that refused a 429 or a 503
// service-overloaded, by the problem's member that names it ("limit",
// "shedder" or "bound"); "" for any other problem.
func refusedBy(p *Problem) (key, name string) {
	if p.Status != http.StatusTooManyRequests && p.Slug != "service-overloaded" {
		return "", ""
	}
	for _, key := range [...]string{"limit", "shedder", "bound"} {
		switch v := p.Extensions[key].(type) {
		case string:
			return key, v
		case ratelimit.Name:
			return key, string(v)
		}
	}
	return "", ""
}

// handleError is echo's error handler: every error becomes a problem response.
// Errors that are not problems of the client are logged with the request id.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	p, known := problemFor(err)
	if p.Slug == "service-unavailable" {
		s.dbOutage.Failed(err)
	}
	if key, name := refusedBy(p); key != "" {
		level := slog.LevelInfo
		if p.Status >= 500 {
			level = slog.LevelWarn
		}
		s.refusals.Count(key, name, level)
	}
	if !known || p.Status >= 500 && !reportedElsewhere[p.Slug] {
		s.logger.Error("request failed", "request_id", requestID(c), "route", routeOf(c), "error", err)
	}
	writeProblem(c, p)
}

func writeProblem(c echo.Context, p *Problem) {
	if wantsPage(c) {
		writeProblemPage(c, p)
		return
	}
	body := problemDocument(p)
	if p.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(p.RetryAfter), 10))
	}
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	c.Response().WriteHeader(p.Status)
	_, _ = c.Response().Write(body)
}

// problemDocument is the JSON body of a problem: its members, then its
// extensions, in the order of their names (as a map would print them). It is
// written by hand rather than through a map and encoding/json, because every
// refusal (429) is one: it must cost next to nothing. Strings are escaped as
// JSON needs, and not for HTML (a detail reads "<admin token>").
func problemDocument(p *Problem) []byte {
	members := make([]string, 0, 4+len(p.Extensions))
	members = append(members, "detail", "status", "title", "type")
	for k := range p.Extensions {
		if k != "detail" && k != "status" && k != "title" && k != "type" {
			members = append(members, k)
		}
	}
	slices.Sort(members)
	b := make([]byte, 0, 256)
	b = append(b, '{')
	for i, k := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch k {
		case "detail":
			b = appendJSONString(b, shortDetail(p.Detail))
		case "status":
			b = strconv.AppendInt(b, int64(p.Status), 10)
		case "title":
			b = appendJSONString(b, problemTypes[p.Slug].Title)
		case "type":
			b = appendJSONString(b, "/problems/"+p.Slug)
		default:
			b = appendJSONValue(b, p.Extensions[k])
		}
	}
	return append(b, '}', '\n')
}

// maxDetailRunes bounds a problem's detail, as docs/openapi.yaml states.
const maxDetailRunes = 1000

// shortDetail is detail cut to maxDetailRunes characters, ending in "…", so
// that a detail quoting a client's long input (an unknown field's name) is
// never as long as that input.
func shortDetail(detail string) string {
	if len(detail) <= maxDetailRunes || utf8.RuneCountInString(detail) <= maxDetailRunes {
		return detail
	}
	return string([]rune(detail)[:maxDetailRunes-1]) + "…"
}

// appendJSONValue appends v as JSON: the plain kinds by hand, the rest through
// encoding/json.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendJSONString(b, v)
	case ratelimit.Name:
		return appendJSONString(b, string(v))
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case []ratelimit.Name:
		b = append(b, '[')
		for i, n := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(n))
		}
		return append(b, ']')
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimRight(out.Bytes(), "\n")...)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and control
// characters escaped; invalid UTF-8 replaced, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				switch c {
				case '\n':
					b = append(b, '\\', 'n')
				case '\r':
					b = append(b, '\\', 'r')
				case '\t':
					b = append(b, '\\', 't')
				default:
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				}
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, "\\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}

var problemPage = template.Must(template.New("problem").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Stagedoor</title></head>
<body><h1>{{.Title}}</h1><p>HTTP status {{.Status}} · type <code>/problems/{{.Slug}}</code></p>
<p>{{.Description}}</p></body></html>
`))

// problemDoc serves GET /problems/{slug}: a short page about one problem type.
func (s *Server) problemDoc(c echo.Context) error {
	slug := c.Param("slug")
	t, ok := problemTypes[slug]
	if !ok {
		return errkind.NotFoundf("there is no problem type %q", slug)
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(http.StatusOK)
	return problemPage.Execute(c.Response(), struct {
		ProblemType
		Slug string
	}{t, slug})
}
