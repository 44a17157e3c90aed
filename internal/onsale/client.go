package onsale

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// client is one simulated client: its own connections (one Transport, kept
// alive, dialling from its own address when it has one), its session, the
// generated API client over them, and the recorder every request of it goes
// to.
type client struct {
	id    int32
	base  string
	token string
	http  *http.Client
	api   *apiclient.Client
	rec   *recorder
	rng   *rand.Rand
}

// newTransport is a client's own Transport: keep-alive, few idle connections,
// dialling from local when it is not nil. An idle connection is dropped after
// idleTimeout, before an edge would close it (HAProxy's keep-alive timeout is
// 10 s with make cluster's configuration): a request sent on a connection the
// server is closing at that moment fails with no answer (EOF), which a POST
// cannot retry and a browser would hide.
func newTransport(local net.IP) *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if local != nil {
		dialer.LocalAddr = &net.TCPAddr{IP: local}
	}
	return &http.Transport{
		DialContext:           dialer.DialContext,
		MaxIdleConns:          2,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       idleTimeout,
		ResponseHeaderTimeout: 30 * time.Second,
		ForceAttemptHTTP2:     false,
	}
}

// idleTimeout is how long a client keeps an idle connection.
const idleTimeout = 5 * time.Second

// requestTimeout bounds one request, answer included.
const requestTimeout = 30 * time.Second

func newClient(id int32, base, token string, t *http.Transport, rec *recorder, seed int64) *client {
	c := &client{
		id: id, base: strings.TrimRight(base, "/"), token: token, rec: rec,
		http: &http.Client{Transport: t, Timeout: requestTimeout,
			// A redirect is an answer to record, never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		rng: rand.New(rand.NewPCG(uint64(seed), uint64(id)+1)),
	}
	c.api = &apiclient.Client{Server: c.base + "/", Client: c.http, RequestEditors: []apiclient.RequestEditorFn{c.authorize}}
	return c
}

// authorize sends the client's session token, once it has one.
func (c *client) authorize(_ context.Context, req *http.Request) error {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return nil
}

// sender sends one request of the generated client (c.api) with ctx.
type sender func(ctx context.Context) (*http.Response, error)

// answer is what came back.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	problem problem
}

// problem is the part of an RFC 9457 problem the simulator reads.
type problem struct {
	Type               string         `json:"type"`
	Detail             string         `json:"detail"`
	Limit              string         `json:"limit"`
	Shedder            string         `json:"shedder"`
	Bound              string         `json:"bound"` // service-overloaded: what refused (the shedder's name for a shedder)
	RetryAfterMS       int64          `json:"retry_after_ms"`
	UnavailableSeatIDs []apiclient.ID `json:"unavailable_seat_ids"`
	OrderID            string         `json:"order_id"`
}

// slug is the problem type's last part: "/problems/rate-limited" → "rate-limited".
func (p problem) slug() string { return p.Type[strings.LastIndexByte(p.Type, '/')+1:] }

// edgeLimit names a 429 that carries no problem saying which limit refused:
// the edge's own limit (HAProxy's, per client address).
const edgeLimit = "edge"

// call sends one request, records it under route, and returns the answer,
// or an error when none came.
func (c *client) call(ctx context.Context, route string, send sender) (answer, error) {
	start := time.Now()
	resp, err := send(ctx)
	if err != nil {
		if ctx.Err() == nil { // the run's end is not the server's failure
			c.rec.add(c.id, route, start, time.Since(start), 0, "-", errorClass(err), "", "", "")
		}
		return answer{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	resp.Body.Close()
	latency := time.Since(start)
	if err != nil {
		if ctx.Err() == nil {
			c.rec.add(c.id, route, start, latency, 0, "-", errorClass(err), "", "", "")
		}
		return answer{}, err
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: raw}
	if resp.StatusCode >= 400 {
		_ = json.Unmarshal(raw, &a.problem) // not every refusal is a problem (an edge's)
	}
	instance := resp.Header.Get("X-Served-By")
	if instance == "" {
		instance = "-"
	}
	c.rec.add(c.id, route, start, latency, a.status, instance, a.problem.slugOrEmpty(), a.problem.Limit, cmp.Or(a.problem.Bound, a.problem.Shedder),
		policyName(resp.Header.Get("RateLimit-Policy")))
	return a, nil
}

// policyName is the limit a RateLimit-Policy header names: "hold-buyer" of
// `"hold-buyer";q=10;w=60`; "" without one. An answer carries the header of
// the tightest limit that decided it in Redis (or by its fallback), none when
// every limit it passed failed open or was off.
func policyName(h string) string {
	if h == "" {
		return ""
	}
	name, _, _ := strings.Cut(h, ";")
	return strings.Trim(strings.TrimSpace(name), `"`)
}

// decode reads the answer's JSON into out.
func (a answer) decode(out any) error {
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("onsale: the answer (%d) is not the JSON expected: %w", a.status, err)
	}
	return nil
}

// retryAfter is how long the answer asks to wait: Retry-After (seconds), or
// retry_after_ms, or def.
func (a answer) retryAfter(def time.Duration) time.Duration {
	if a.problem.RetryAfterMS > 0 {
		return time.Duration(a.problem.RetryAfterMS) * time.Millisecond
	}
	if s, err := strconv.Atoi(strings.TrimSpace(a.header.Get("Retry-After"))); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return def
}

// sleep waits d, or less when ctx ends; it says whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter is d give or take 10 %.
func (c *client) jitter(d time.Duration) time.Duration {
	return d + time.Duration((c.rng.Float64()*0.2-0.1)*float64(d))
}

// setupPatience is how long a setup request (the organizer's, the limits')
// is retried while it gets no answer or a documented refusal: an instance
// that sheds load, a limit, a bound.
const setupPatience = time.Minute

// setupCall is call for the run's own setup: it tries again, after
// Retry-After, while no answer comes or the answer is a refusal (a 429, a
// documented 503), for up to setupPatience; a refusal whose Retry-After
// reaches past it is returned at once.
func (c *client) setupCall(ctx context.Context, route string, send sender) (answer, error) {
	deadline := time.Now().Add(setupPatience)
	for {
		a, err := c.call(ctx, route, send)
		retry := err != nil || kindOf(a.status, a.problem.slugOrEmpty()) == kindRefused
		wait := time.Second
		if err == nil {
			wait = a.retryAfter(time.Second)
		}
		if !retry || time.Now().Add(wait).After(deadline) { // a limit that refuses for longer: say so now
			return a, err
		}
		if !sleep(ctx, min(wait, 5*time.Second)) {
			return a, ctx.Err()
		}
	}
}

// slugOrEmpty is the problem's slug, "" when there is no problem.
func (p problem) slugOrEmpty() string {
	if p.Type == "" {
		return ""
	}
	return p.slug()
}

// errorClass names, briefly, why no answer came: kept as the request's
// problem (requests.csv), to tell a refused connection from a slow one.
func errorClass(err error) string {
	var nerr net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "error: connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "error: connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "error: connection closed (EOF)"
	case errors.As(err, &op) && op.Op == "dial" && op.Timeout():
		return "error: connect timeout"
	case errors.As(err, &nerr) && nerr.Timeout():
		return "error: timeout"
	}
	return "error: other"
}
