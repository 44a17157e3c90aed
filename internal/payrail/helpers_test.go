package payrail

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// reply is any Payrail response body: a charge or an error.
type reply struct {
	Charge
	Error string `json:"error"`
}

// response is one decoded Payrail response.
type response struct {
	status int
	header http.Header
	body   reply
	raw    []byte
}

// start serves a new Server, its ledger in a database of the test's own, on an
// httptest server closed at the end of the test. Its logs are returned too.
func start(t *testing.T, cfg Config) (*Server, *httptest.Server, *testenv.LogBuffer) {
	t.Helper()
	return startOn(t, testenv.Postgres(t), cfg)
}

// startOn is start with the ledger in db: a second Server on the same db is the
// first one restarted.
func startOn(t *testing.T, db *pgxpool.Pool, cfg Config) (*Server, *httptest.Server, *testenv.LogBuffer) {
	t.Helper()
	logs := &testenv.LogBuffer{}
	s, err := Open(t.Context(), db, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, logs
}

// charges returns every charge s made.
func charges(t *testing.T, s *Server) []Charge {
	t.Helper()
	all, err := s.Charges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// chargeBody is a valid POST /charges body for token.
func chargeBody(token string) string {
	return `{"amount_cents":4200,"currency":"EUR","token":"` + token + `"}`
}

// post sends POST /charges with key (none when empty) and body.
func post(ctx context.Context, t *testing.T, ts *httptest.Server, key, body string) (response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/charges", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return do(ts, req)
}

// mustPost is post that fails the test on a transport error.
func mustPost(t *testing.T, ts *httptest.Server, key, body string) response {
	t.Helper()
	r, err := post(t.Context(), t, ts, key, body)
	if err != nil {
		t.Fatalf("POST /charges: %v", err)
	}
	return r
}

// get sends GET to path and decodes the reply into v when v is not nil.
func get(t *testing.T, ts *httptest.Server, path string, v any) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := do(ts, req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if v != nil {
		if err := json.Unmarshal(r.raw, v); err != nil {
			t.Fatalf("GET %s: decode %q: %v", path, r.raw, err)
		}
	}
	return r
}

func do(ts *httptest.Server, req *http.Request) (response, error) {
	res, err := ts.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	r := response{status: res.StatusCode, header: res.Header, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		return r, err
	}
	return r, nil
}

func decodeInto(raw []byte, v any) error { return json.Unmarshal(raw, v) }
