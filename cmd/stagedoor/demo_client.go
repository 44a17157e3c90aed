package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// demoClient is stagedoor demo's API client, the one generated from the
// contract: one request a step, each printed with its answer.
type demoClient struct {
	api      *apiclient.ClientWithResponses
	http     *http.Client
	out      io.Writer
	last     *http.Request // the step's request, for its line
	answered bool          // whether an answer came to it
}

func newDemoClient(base string, out io.Writer) (*demoClient, error) {
	c := &demoClient{http: &http.Client{Timeout: 30 * time.Second}, out: out}
	api, err := apiclient.NewClientWithResponses(base, apiclient.WithHTTPClient(c))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	c.api = api
	return c, nil
}

// Do sends the generated client's request, keeping it for the step's line.
func (c *demoClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	c.last, c.answered = req, err == nil
	return resp, err
}

// check ends a step: who made the request, a is its answer (err the
// generated client's), want the status expected, and summary (nil: none)
// says what the answer means. It prints one line: who, the request, the
// status and the summary; or, on a status other than want, the problem the
// answer holds, and fails.
func (c *demoClient) check(who string, a apiclient.Answer, err error, want int, summary func() string) error {
	r := demoRequest{who: who, method: "?", path: "?", want: want}
	if c.last != nil {
		r.method, r.path = c.last.Method, c.last.URL.RequestURI()
	}
	answered := c.answered
	c.last, c.answered = nil, false
	switch {
	case err != nil && answered:
		c.print(r, "not the JSON expected")
		return fmt.Errorf("demo: %s %s: the answer is not the JSON expected: %w", r.method, r.path, err)
	case err != nil:
		c.print(r, "no answer")
		return fmt.Errorf("demo: %w (is Stagedoor running there? make run starts it)", err)
	case a.StatusCode() != want:
		e := unexpectedAnswer(r, a.StatusCode(), a.GetBody())
		c.print(r, fmt.Sprintf("%s, want %d: %s", a.Status(), want, e.problem))
		return e
	}
	line := a.Status()
	if summary != nil {
		line += ": " + summary()
	}
	c.print(r, line)
	return nil
}

// demoRequest is who made a step's request, what it was and what it expected.
type demoRequest struct {
	who          string // buyer, door or organizer
	method, path string
	want         int
}

func (c *demoClient) print(r demoRequest, answer string) {
	fmt.Fprintf(c.out, "%-9s %s %s → %s\n", r.who, r.method, r.path, answer)
}

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
	var p apiclient.Problem
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
