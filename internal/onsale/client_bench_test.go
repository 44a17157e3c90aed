package onsale

// The client's cost: go test -run '^$' -bench . ./internal/onsale/ (the
// in-process server's allocations are counted too).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

const benchEvent = "0190a6f4-7c2e-7000-8000-000000000001"

func benchServer(b *testing.B) *httptest.Server {
	var m strings.Builder
	m.WriteString(`{"event_id":"` + benchEvent + `","as_of":"2026-01-01T00:00:00Z","seats":[`)
	for i := range 5000 {
		if i > 0 {
			m.WriteString(",")
		}
		fmt.Fprintf(&m, `{"id":"0190a6f4-7c2e-7000-8000-%012d","section":"Stalls","row":"A","number":%d,"price_cents":4500,"status":"available"}`, i, i%25+1)
	}
	m.WriteString("]}")
	seatMap := []byte(m.String())
	hold := []byte(`{"id":"0190a6f4-7c2e-7000-8000-0000000000ff","event_id":"` + benchEvent + `","seat_ids":["0190a6f4-7c2e-7000-8000-000000000001"],"status":"active","expires_at":"2026-01-01T00:10:00Z","total_cents":4500,"currency":"USD","created_at":"2026-01-01T00:00:00Z"}`)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			w.Write(hold)
			return
		}
		w.Write(seatMap)
	}))
	b.Cleanup(s.Close)
	return s
}

func benchClient(b *testing.B) *client {
	s := benchServer(b)
	return newClient(1, s.URL, "tok", newTransport(nil), newRecorder(time.Now()), 1)
}

// BenchmarkHold is one hold, sent and its answer read and recorded.
func BenchmarkHold(b *testing.B) {
	c, ctx := benchClient(b), context.Background()
	event, seats := uuid.MustParse(benchEvent), []apiclient.ID{uuid.MustParse("0190a6f4-7c2e-7000-8000-000000000001")}
	b.ReportAllocs()
	for b.Loop() {
		a, err := c.call(ctx, routeHold, c.hold(event, seats))
		var h holdID
		if err != nil || a.decode(&h) != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeatMap is one read of a 5,000-seat map.
func BenchmarkSeatMap(b *testing.B) {
	c, ctx := benchClient(b), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if seats, ok := c.seatMap(ctx, uuid.MustParse(benchEvent)); !ok || len(seats) != 5000 {
			b.Fatal(len(seats))
		}
	}
}
