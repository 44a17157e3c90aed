package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/klauspost/compress/gzhttp"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// BenchmarkSeatMap is the server time of GET /v1/events/{id}/seats of make
// run's demo event (300 seats, 38 KB of JSON), side by side: sent as it is;
// compressed, as the route does it, once a snapshot (each second) for every
// reader; and compressed on each request, as the compression ring would if
// the route were not ownEncoding. It reports the bytes sent.
//
//	go test -run '^$' -bench SeatMap -benchmem ./internal/httpapi/
func BenchmarkSeatMap(b *testing.B) {
	ts := startInstance(b, instance{})
	org := newAccount(b, ts, auth.Organizer)
	event, _ := newEvent(b, ts, org, eventBody(15, 20))
	path := "/v1/events/" + event + "/seats"
	perRequest := gzhttp.GzipHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plain := r.Clone(r.Context())
		plain.Header.Set("Accept-Encoding", "identity")
		ts.Handler.ServeHTTP(w, plain)
	}))
	for _, c := range []struct {
		name, accept string
		handler      http.Handler
	}{
		{"identity", "identity", ts.Handler},
		{"gzip-once-a-snapshot", "gzip", ts.Handler},
		{"gzip-each-request", "gzip", perRequest},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", path, nil)
				req.Header.Set("Accept-Encoding", c.accept)
				c.handler.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}
