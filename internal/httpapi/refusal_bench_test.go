package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// BenchmarkRefusal compares, in one run, the server time of a refused hold
// (429 by hold-buyer, from the denial cache, the session from the credential
// cache) with the floor of the HTTP stack: GET /healthz through the same rings.
// The target is a refusal at most 1.5× the floor.
//
//	go test -run '^$' -bench Refusal -benchmem ./internal/httpapi/
func BenchmarkRefusal(b *testing.B) {
	ts := startInstance(b, instance{env: limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "1/1h")})
	org, buyer := newAccount(b, ts, auth.Organizer), newAccount(b, ts, auth.Buyer)
	event, seats := newEvent(b, ts, org, eventBody(1, 2))
	body := holdBody(event, seats[1])
	hold := func(header ...string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/holds", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+buyer.token)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		ts.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := ts.inProcess(b, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...).StatusCode; code != 201 {
		b.Fatalf("first hold %d", code)
	}
	hold() // refused: the denial is cached from here on

	b.Run("healthz", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rec := httptest.NewRecorder()
			ts.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
	})
	b.Run("hold-429", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if code := hold(); code != 429 {
				b.Fatalf("status %d, want 429", code)
			}
		}
	})
	b.Run("hold-429-gzip", func(b *testing.B) { // as a browser asks: a write's row has no compression ring
		b.ReportAllocs()
		for b.Loop() {
			if code := hold("Accept-Encoding", "gzip, deflate, br, zstd"); code != 429 {
				b.Fatalf("status %d, want 429", code)
			}
		}
	})
	b.Run("hold-429-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if code := hold(); code != 429 {
					b.Fatalf("status %d, want 429", code)
				}
			}
		})
	})
}

// BenchmarkSeatTaken is the server time of a hold refused 409 because its seat
// is held already (every limit off, so that only the hold's own work counts):
// a read of the seats, no lock and no write.
//
//	go test -run '^$' -bench SeatTaken -benchmem ./internal/httpapi/
func BenchmarkSeatTaken(b *testing.B) {
	ts := startInstance(b, instance{env: limitEnv("STAGEDOOR_ADMIN_TOKEN", adminToken, "STAGEDOOR_WORKER_UTILIZATION", "off")})
	for _, limit := range []string{"hold-buyer", "hold-organizer", "buyer-concurrency"} {
		if a := ts.inProcess(b, "PUT", "/v1/admin/limits/"+limit, `{"mode":"off"}`, "Authorization", "Bearer "+adminToken); a.StatusCode != 200 {
			b.Fatalf("PUT %s off = %d %s", limit, a.StatusCode, a.raw)
		}
	}
	org, first, second := newAccount(b, ts, auth.Organizer), newAccount(b, ts, auth.Buyer), newAccount(b, ts, auth.Buyer)
	event, seats := newEvent(b, ts, org, eventBody(1, 2))
	if code := ts.inProcess(b, "POST", "/v1/holds", holdBody(event, seats[0]), first.bearer()...).StatusCode; code != 201 {
		b.Fatalf("first hold %d", code)
	}
	body := holdBody(event, seats[0])
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/v1/holds", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+second.token)
			ts.Handler.ServeHTTP(rec, req)
			if rec.Code != 409 {
				b.Fatalf("status %d, want 409: %s", rec.Code, rec.Body)
			}
		}
	})
}
