package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// demoClient is stagedoor demo's HTTP client: one request a step, each printed
// with its answer.
type demoClient struct {
	base string
	out  io.Writer
	http *http.Client
}

// demoRequest is one step of the demo.
type demoRequest struct {
	who          string // buyer, door or organizer: who makes the request
	method, path string
	token        string            // a session token, sent as Authorization: Bearer
	header       map[string]string // more headers (X-Api-Key, Idempotency-Key)
	body         any               // sent as JSON when not nil
	want         int               // the status expected; any other fails the step
	into         any               // the answer is decoded into it
	summary      func() string     // says what the answer means, once decoded
}

// do sends the request and decodes the answer into r.into. It prints one line:
// who, the request, the status and r.summary's account of the answer; or, on
// a status other than r.want, the problem the answer holds, and fails.
func (c *demoClient) do(ctx context.Context, r demoRequest) error {
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return fmt.Errorf("demo: %s %s: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return fmt.Errorf("demo: %s %s: %w", r.method, r.path, err)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.print(r, "no answer")
		return fmt.Errorf("demo: %s %s: %w (is Stagedoor running there? make run starts it)", r.method, c.base+r.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("demo: %s %s: reading the answer: %w", r.method, r.path, err)
	}
	if resp.StatusCode != r.want {
		e := unexpectedAnswer(r, resp.StatusCode, raw)
		c.print(r, fmt.Sprintf("%s, want %d: %s", resp.Status, r.want, e.problem))
		return e
	}
	if r.into != nil {
		if err := json.Unmarshal(raw, r.into); err != nil {
			c.print(r, resp.Status+": not the JSON expected")
			return fmt.Errorf("demo: %s %s: the answer is not the JSON expected: %w", r.method, r.path, err)
		}
	}
	summary := ""
	if r.summary != nil {
		summary = ": " + r.summary()
	}
	c.print(r, resp.Status+summary)
	return nil
}

func (c *demoClient) print(r demoRequest, answer string) {
	fmt.Fprintf(c.out, "%-9s %s %s → %s\n", r.who, r.method, r.path, answer)
}

// The answers demo reads: only the fields it uses (the API sends more).
type (
	demoLogin struct {
		Token     string `json:"token"`
		Principal struct {
			Kind  string `json:"kind"`
			Email string `json:"email"`
		} `json:"principal"`
	}
	demoEvent struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Venue          string `json:"venue"`
		SeatsTotal     int    `json:"seats_total"`
		SeatsAvailable int    `json:"seats_available"`
		SeatsHeld      int    `json:"seats_held"` // the organizer's list only
		SeatsSold      int    `json:"seats_sold"` // the organizer's list only
	}
	demoEvents struct {
		Events    []demoEvent `json:"events"`
		NextAfter *string     `json:"next_after"`
	}
	demoSeat struct {
		ID         string `json:"id"`
		Section    string `json:"section"`
		Row        string `json:"row"`
		Number     int    `json:"number"`
		PriceCents int64  `json:"price_cents"`
		Status     string `json:"status"`
	}
	demoHold struct {
		ID         string    `json:"id"`
		Status     string    `json:"status"`
		ExpiresAt  time.Time `json:"expires_at"`
		TotalCents int64     `json:"total_cents"`
		Currency   string    `json:"currency"`
	}
	demoTicket struct {
		ID     string `json:"id"`
		Code   string `json:"code"`
		Status string `json:"status"`
	}
	demoOrder struct {
		ID         string       `json:"id"`
		Status     string       `json:"status"`
		TotalCents int64        `json:"total_cents"`
		Currency   string       `json:"currency"`
		Tickets    []demoTicket `json:"tickets"`
	}
	demoScannerKey struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	// demoScan is a scan's answer: 200 admitted, or a scan-rejected problem.
	demoScan struct {
		Result         string    `json:"result"`
		ScannedAt      time.Time `json:"scanned_at"`
		FirstScannedAt time.Time `json:"first_scanned_at"`
		Seat           struct {
			Section string `json:"section"`
			Row     string `json:"row"`
			Number  int    `json:"number"`
		} `json:"seat"`
	}
	demoScanAttempt struct {
		TicketID   *string `json:"ticket_id"`
		CodePrefix string  `json:"code_prefix"`
		Result     string  `json:"result"`
	}
)

// demoAnswerError is an answer of a status the step did not expect.
type demoAnswerError struct {
	method, path string
	status, want int
	problemType  string // the problem's type, when the answer is one
	problem      string // what the answer says
}

func (e *demoAnswerError) Error() string {
	return fmt.Sprintf("demo: %s %s answered %d, want %d: %s", e.method, e.path, e.status, e.want, e.problem)
}

// unexpectedAnswer says what an unexpected answer was: the RFC 9457 problem's
// type and detail, or the start of a body that is no problem.
func unexpectedAnswer(r demoRequest, status int, raw []byte) *demoAnswerError {
	e := &demoAnswerError{method: r.method, path: r.path, status: status, want: r.want}
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(raw, &p) == nil && p.Type != "" {
		if p.Detail == "" {
			p.Detail = p.Title
		}
		e.problemType, e.problem = p.Type, fmt.Sprintf("problem %s: %s", p.Type, p.Detail)
		return e
	}
	text := strings.TrimSpace(string(raw))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	e.problem = "the answer " + text
	if text == "" {
		e.problem = "an empty answer"
	}
	return e
}
