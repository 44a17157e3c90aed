// Package apitest is what tests share to call a running Stagedoor: the
// generated client's answers checked, and raw exchanges for the tests that
// assert a status, a header or a body the client would not show as sent.
package apitest

import (
	"io"
	"net/http"
	"testing"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// Client is the generated client of the Stagedoor at base, failing t when
// base is no URL.
func Client(t testing.TB, base string, opts ...apiclient.ClientOption) *apiclient.ClientWithResponses {
	t.Helper()
	c, err := apiclient.NewClientWithResponses(base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Expect fails t unless the call answered (err is nil) with status want.
func Expect(t testing.TB, a apiclient.Answer, err error, want int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if a.StatusCode() != want {
		t.Fatalf("answered %s, want %d: %s", a.Status(), want, a.GetBody())
	}
}

// Send sends req with c and returns the answer with its body read whole,
// failing t when no answer comes.
func Send(t testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}
