package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/apiclient/apitest"
)

// The API's JSON as a client reads it. Tests decode an answer into one of
// these rather than into a map, so that an assertion names a field the
// compiler knows, and a renamed or retyped field fails to decode. Where the
// generated client has the answer's type (apiclient.Order, Ticket, Event,
// SeatMap, Session…), tests decode into it instead, and the lists it declares
// inline are wrapped here (orderList, ticketList) or read with parse.

// problem is an RFC 9457 problem with every extension member Stagedoor sends.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`

	Limit              string   `json:"limit"`                // rate-limited
	ViolatedPolicies   []string `json:"violated-policies"`    // rate-limited
	RetryAfterMS       float64  `json:"retry_after_ms"`       // rate-limited, too-many-concurrent-requests
	MaxInFlight        int      `json:"max_in_flight"`        // too-many-concurrent-requests
	Shedder            string   `json:"shedder"`              // service-overloaded by a shedder
	Bound              string   `json:"bound"`                // service-overloaded: what refused
	UnavailableSeatIDs []string `json:"unavailable_seat_ids"` // seats-unavailable
	MaxHeldSeats       int      `json:"max_held_seats"`       // too-many-seats-held
	SeatsHeld          int      `json:"seats_held"`           // too-many-seats-held
	CooldownSeatIDs    []string `json:"cooldown_seat_ids"`    // rehold-cooldown
	SoldOutSections    []struct {
		SectionID string `json:"section_id"`
		Section   string `json:"section"`
		Asked     int    `json:"asked"`
		Available int    `json:"available"`
	} `json:"sold_out_sections"` // sold-out
	OrderID        string    `json:"order_id"`                  // payment-declined, payment-unavailable, order-released, refund-refused
	NotRefundable  []string  `json:"not_refundable_ticket_ids"` // ticket-not-refundable
	Result         string    `json:"result"`                    // scan-rejected
	FirstScannedAt time.Time `json:"first_scanned_at"`          // scan-rejected, already_scanned
	TicketID       string    `json:"ticket_id"`                 // scan-rejected
	EventID        string    `json:"event_id"`                  // scan-rejected
	TicketStatus   string    `json:"ticket_status"`             // ticket-not-transferable
}

// is reports whether the problem is of type /problems/slug.
func (p problem) is(slug string) bool { return p.Type == "/problems/"+slug }

type health struct {
	Status   string `json:"status"`
	Postgres string `json:"postgres"`
	Redis    string `json:"redis"`
}

type accountJSON struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type holdJSON struct {
	ID      string   `json:"id"`
	EventID string   `json:"event_id"`
	SeatIDs []string `json:"seat_ids"`
	General []struct {
		SectionID string `json:"section_id"`
		Section   string `json:"section"`
		Quantity  int    `json:"quantity"`
	} `json:"general"`
	Status     string    `json:"status"`
	ExpiresAt  time.Time `json:"expires_at"`
	TotalCents int64     `json:"total_cents"`
	Currency   string    `json:"currency"`
}

// organizerEventList is GET /v1/organizer/events.
type organizerEventList struct {
	Events    []apiclient.OrganizerEvent `json:"events"`
	NextAfter *string                    `json:"next_after"`
}

type orderList struct {
	Orders []apiclient.Order `json:"orders"`
}

type ticketList struct {
	Tickets []apiclient.Ticket `json:"tickets"`
}

type scannerKeyJSON struct {
	ID        string     `json:"id"`
	Label     string     `json:"label"`
	EventID   *string    `json:"event_id"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	Key       string     `json:"key"` // at creation only
}

type scannerKeyList struct {
	ScannerKeys []scannerKeyJSON `json:"scanner_keys"`
}

type admissionJSON struct {
	Result    string `json:"result"`
	TicketID  string `json:"ticket_id"`
	EventID   string `json:"event_id"`
	Reference string `json:"reference"`
	Seat      struct {
		Section          string `json:"section"`
		Row              string `json:"row"`
		Number           int    `json:"number"`
		GeneralAdmission bool   `json:"general_admission"`
	} `json:"seat"`
	ScannedAt time.Time `json:"scanned_at"`
}

type queueJSON struct {
	Status               string     `json:"status"`
	EventID              string     `json:"event_id"`
	Position             *int       `json:"position"`
	EstimatedWaitSeconds *int64     `json:"estimated_wait_seconds"`
	AdmittedUntil        *time.Time `json:"admitted_until"`
	ClosedReason         string     `json:"closed_reason"`
	QueueToken           string     `json:"queue_token"`
	Paused               bool       `json:"paused"`
}

type limitJSON struct {
	Name      string     `json:"name"`
	Rate      int        `json:"rate"`
	PeriodMS  int64      `json:"period_ms"`
	Burst     int        `json:"burst"`
	Mode      string     `json:"mode"`
	UpdatedAt *time.Time `json:"updated_at"`
	UpdatedBy string     `json:"updated_by"`
}

// answer is one HTTP answer, its body read; decode it with as or problem.
type answer struct {
	*http.Response
	raw []byte
}

// request sends one request; header holds name, value pairs.
func (ts *testServer) request(t testing.TB, method, path, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, raw := apitest.Send(t, http.DefaultClient, req)
	return answer{Response: resp, raw: raw}
}

// as decodes the answer's body as a T, failing the test when it is not one.
func as[T any](t testing.TB, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(a.raw, &v); err != nil {
		t.Fatalf("%d answer %q is not a %T: %v", a.StatusCode, a.raw, v, err)
	}
	return v
}

// problem decodes the answer as a problem, failing the test unless it is one.
func (a answer) problem(t testing.TB) problem {
	t.Helper()
	if ct := a.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%d answer %q with Content-Type %q is not a problem", a.StatusCode, a.raw, ct)
	}
	return as[problem](t, a)
}

// inProcess answers one request in-process, through the whole handler chain
// but no socket: for benchmarks, and tests that send many requests.
func (ts *testServer) inProcess(t testing.TB, method, path, body string, header ...string) answer {
	t.Helper()
	rec := ts.serve(method, path, body, header...)
	return answer{Response: rec.Result(), raw: rec.Body.Bytes()}
}

// parse reads the answer with one of the generated client's
// Parse…Response functions, failing the test when its body does not parse.
func parse[R any](t testing.TB, a answer, parse func(*http.Response) (*R, error)) *R {
	t.Helper()
	resp := *a.Response
	resp.Body = io.NopCloser(bytes.NewReader(a.raw))
	r, err := parse(&resp)
	if err != nil {
		t.Fatalf("%d answer %q does not parse: %v", a.StatusCode, a.raw, err)
	}
	return r
}

// deref is *p, or T's zero value where the answer left the member out.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
