package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/hold"
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
	Status      int
	Title       string
	Description string
}

// ProblemTypes returns the catalogue of every problem Stagedoor sends, by slug.
func ProblemTypes() map[string]ProblemType { return maps.Clone(problemTypes) }

// problemTypes lists every problem Stagedoor sends, by slug.
var problemTypes = map[string]ProblemType{
	"invalid-request":         {400, "Invalid request", "The request could not be read: malformed JSON, an unknown or missing field, a value out of range, or a body over 64 KiB. The detail says which. Nothing was changed."},
	"unauthorized":            {401, "Unauthorized", "The request carries no credential, or one that is unknown, expired or revoked. Send Authorization: Bearer <token> (or X-Api-Key for scanners)."},
	"invalid-credentials":     {401, "Invalid credentials", "The email and password do not match an account. Unknown emails and wrong passwords get the same answer."},
	"forbidden":               {403, "Forbidden", "The credential is valid but does not allow this action."},
	"not-admitted":            {403, "Not admitted", "This event has a waiting room; join the queue and hold seats once admitted."},
	"not-found":               {404, "Not found", "There is no such resource, or it belongs to someone else."},
	"no-waiting-room":         {404, "No waiting room", "This event has no waiting room, so there is no queue to join or poll: hold its seats directly."},
	"request-timeout":         {408, "Request timeout", "The request's body did not arrive within STAGEDOOR_BODY_TIMEOUT (5 s by default); nothing was done and the connection is closed. Send the body at once."},
	"method-not-allowed":      {405, "Method not allowed", "The path exists but does not accept this method."},
	"email-taken":             {409, "Email taken", "An account with this email already exists."},
	"seats-unavailable":       {409, "Seats unavailable", "Some of the seats asked for are held or sold; unavailable_seat_ids lists them. Nothing was held."},
	"too-many-seats-held":     {409, "Too many seats held", "The hold would take you past the most seats one buyer may hold of one event at once (STAGEDOOR_MAX_HELD_SEATS, 10 by default; seats in a checkout count, seats bought do not). max_held_seats and seats_held say where you stand. Nothing was held: release a hold or check out first."},
	"not-on-sale":             {409, "Not on sale", "The event's sale has not opened yet."},
	"hold-not-active":         {409, "Hold not active", "The hold has expired, was released, is being checked out, or was already converted into an order. The detail says which."},
	"order-released":          {409, "Order released", "The payment's outcome could not be confirmed, Payrail then proved there was no charge, and the order was released with its hold: its seats went back on sale. Nothing stays charged: a charge that reaches Payrail late is refunded (the order shows refunded_at). order_id names the order; hold seats again to buy."},
	"idempotency-in-progress": {409, "Request in progress", "A request with this Idempotency-Key is still running. Retry after it finishes to get its response."},
	"scan-rejected":           {409, "Scan rejected", "The ticket was not admitted; the result member says why: already_scanned (409, with first_scanned_at), wrong_event (409: the scanner key is bound to another event) or invalid (404: no ticket of yours has this code). The attempt was recorded."},
	"payment-declined":        {402, "Payment declined", "The payment provider declined the charge. The hold is still active; try another payment method (with a new Idempotency-Key: this one stays declined). order_id names the declined order."},
	"idempotency-mismatch":    {422, "Idempotency key reused", "This Idempotency-Key was used with a different request body."},
	"rate-limited":            {429, "Too many requests", "A rate limit refused the request; it spent no token. Retry-After (seconds) and retry_after_ms say when it would be allowed; limit names the limit."},
	"internal-error":          {500, "Internal error", "Something went wrong on our side. The request id identifies it in our logs."},
	"service-overloaded":      {503, "Service overloaded", "This instance is at a bound it keeps to stay up, or cannot reach the store of a waiting room (which fails closed); it refused at once instead of queueing. Retry after Retry-After seconds."},
	"service-unavailable":     {503, "Service unavailable", "PostgreSQL did not answer this request, or ended the connection under it (a restart, a failover). The request may not have been carried out: retry after Retry-After seconds, with the same Idempotency-Key where the route takes one."},
	"payment-unavailable":     {503, "Payment unavailable", "The payment provider failed or its circuit breaker is open, and certainly made no charge: the hold is active again. Retry after Retry-After seconds; a retry with the same Idempotency-Key tries again. (When the outcome is unknown the answer is not this but 202 Accepted with the pending order.)"},
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
	{err: hold.ErrSeatsUnavailable, slug: "seats-unavailable"}, // + unavailable_seat_ids, see problemExtensions
	{err: hold.ErrTooManyHeld, slug: "too-many-seats-held"},    // + max_held_seats, seats_held
	{err: hold.ErrNotOnSale, slug: "not-on-sale"},
	{err: hold.ErrNotActive, slug: "hold-not-active"},
	{err: waitroom.ErrNoRoom, slug: "no-waiting-room"},
	{err: waitroom.ErrNotAdmitted, slug: "not-admitted"},
	{err: waitroom.ErrUnavailable, slug: "service-overloaded", retryAfter: waitroom.RetryAfter},
	{err: checkout.ErrPaymentDeclined, slug: "payment-declined"}, // + order_id
	{err: checkout.ErrPaymentUnavailable, slug: "payment-unavailable", retryAfter: checkout.PaymentRetryAfter},
	{err: checkout.ErrOrderReleased, slug: "order-released"},
	{err: checkout.ErrIdempotencyInProgress, slug: "idempotency-in-progress"},
	{err: checkout.ErrIdempotencyMismatch, slug: "idempotency-mismatch"},
	{err: scan.ErrAlreadyScanned, slug: "scan-rejected"},                       // + result, first_scanned_at
	{err: scan.ErrWrongEvent, slug: "scan-rejected"},                           // + result
	{err: scan.ErrInvalid, slug: "scan-rejected", status: http.StatusNotFound}, // + result
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
	var rejected *scan.Rejection
	if errors.As(err, &rejected) {
		return scanRejectionMembers(rejected)
	}
	var unavailable *hold.UnavailableError
	if errors.As(err, &unavailable) {
		return map[string]any{"unavailable_seat_ids": unavailable.SeatIDs}
	}
	var tooMany *hold.TooManyHeldError
	if errors.As(err, &tooMany) {
		return map[string]any{"max_held_seats": tooMany.Max, "seats_held": tooMany.Held}
	}
	var order *checkout.OrderError
	if errors.As(err, &order) {
		return map[string]any{"order_id": order.OrderID}
	}
	return nil
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
				Extensions: problemExtensions(err), RetryAfter: e.retryAfter}
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
	if !known || p.Status >= 500 && !reportedElsewhere[p.Slug] {
		s.Logger.Error("request failed", "request_id", requestID(c), "route", routeOf(c), "error", err)
	}
	writeProblem(c, p)
}

func writeProblem(c echo.Context, p *Problem) {
	body := problemDocument(p)
	if p.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(p.RetryAfter), 10))
	}
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	_ = c.JSON(p.Status, body)
}

// problemDocument is the JSON body of a problem: its members and extensions.
func problemDocument(p *Problem) map[string]any {
	body := make(map[string]any, 4+len(p.Extensions))
	for k, v := range p.Extensions {
		body[k] = v
	}
	body["type"] = "/problems/" + p.Slug
	body["title"] = problemTypes[p.Slug].Title
	body["status"] = p.Status
	body["detail"] = p.Detail
	return body
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
