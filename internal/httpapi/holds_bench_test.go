package httpapi_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// The benchmarks of holds and seat maps run the whole handler chain in-process
// (ServeHTTP: rings, session lookup, limits in Redis, the hold statement in
// PostgreSQL) with a pool of 24 connections, the production default, and the
// hold limits set high. They assert nothing about time; they report:
//
//	go test -run '^$' -bench 'Holds|SeatMap' -benchtime 5s ./internal/httpapi

// benchEvent is a test server with a 5,000-seat event on sale and buyers
// placing holds on it.
type benchEvent struct {
	ts      *testServer
	org     testAccount
	eventID string
	seats   []string
}

func newBenchEvent(b *testing.B) benchEvent {
	b.Helper()
	db := postgresPool(b, 24)
	ts := startInstance(b, instance{db: db, env: map[string]string{
		"STAGEDOOR_LIMIT_HOLD_BUYER":     "1000000/1s",
		"STAGEDOOR_LIMIT_HOLD_ORGANIZER": "1000000/1s",
		"STAGEDOOR_LIMIT_EVENT_CREATE":   "1000000/1s",
		// These benchmarks measure the hold write, 100 buyers taking thousands of
		// seats; the cap is still checked in every write, just never reached.
		"STAGEDOOR_MAX_HELD_SEATS": "10000",
	}})
	return benchEvent{ts: ts, org: newAccount(b, ts, auth.Organizer)}.another(b)
}

// another is a new 5,000-seat event of the same organizer on the same server.
func (e benchEvent) another(b *testing.B) benchEvent {
	e.eventID, e.seats = newEvent(b, e.ts, e.org, eventBody(50, 100))
	if len(e.seats) != 5000 {
		b.Fatalf("%d seats, want 5000", len(e.seats))
	}
	return e
}

// holder is one buyer holding 2 random seats at a time, again and again: after
// each hold placed it releases its previous one, so about 2 seats of each buyer
// are held at any moment and the event never sells out.
type holder struct {
	benchEvent
	buyer testAccount
	last  string
}

func (e benchEvent) holders(b *testing.B, n int) chan *holder {
	hs := make(chan *holder, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { hs <- &holder{benchEvent: e, buyer: newAccount(b, e.ts, auth.Buyer)} })
	}
	wg.Wait()
	return hs
}

// once tries one hold and reports whether it was placed (else: refused 409).
func (h *holder) once(b *testing.B) bool {
	i, j := rand.IntN(len(h.seats)), rand.IntN(len(h.seats)-1)
	if j >= i {
		j++
	}
	id, ok := h.hold(b, h.eventID, h.seats[i], h.seats[j])
	if !ok {
		return false
	}
	if h.last != "" {
		if rec := h.ts.serve("DELETE", "/v1/holds/"+h.last, "", h.buyer.bearer()...); rec.Code != http.StatusNoContent {
			b.Errorf("release = %d %s", rec.Code, rec.Body)
		}
	}
	h.last = id
	return true
}

// hold places one hold and returns its id, or ok false when it was refused.
func (h *holder) hold(b *testing.B, eventID string, seats ...string) (id string, ok bool) {
	rec := h.ts.serve("POST", "/v1/holds", holdBody(eventID, seats...), h.buyer.bearer()...)
	switch rec.Code {
	case http.StatusCreated:
	case http.StatusConflict:
		return "", false
	default:
		b.Errorf("hold = %d %s", rec.Code, rec.Body)
		return "", false
	}
	var placed struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &placed); err != nil {
		b.Error(err)
	}
	return placed.ID, true
}

// parallelism makes b.RunParallel run n goroutines.
func parallelism(n int) int {
	return (n + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
}

// runHolders resets the timer and runs the benchmark's ops on n goroutines,
// each with a holder of its own from holders, and returns the seconds of wall
// time the ops took.
func runHolders(b *testing.B, holders chan *holder, n int, op func(h *holder)) float64 {
	b.SetParallelism(parallelism(n))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		h := <-holders
		defer func() { holders <- h }()
		for pb.Next() {
			op(h)
		}
	})
	return time.Since(start).Seconds()
}

// BenchmarkHolds: 100 buyers at once on one 5,000-seat event. One op is one
// POST /v1/holds of 2 random seats, and, when it was placed, the DELETE of the
// buyer's previous hold; holds/s counts holds placed per second of wall time.
func BenchmarkHolds(b *testing.B) {
	e := newBenchEvent(b)
	holders := e.holders(b, 100)
	var placed, refused atomic.Int64
	elapsed := runHolders(b, holders, 100, func(h *holder) {
		if h.once(b) {
			placed.Add(1)
		} else {
			refused.Add(1)
		}
	})
	b.ReportMetric(float64(placed.Load())/elapsed, "holds/s")
	b.ReportMetric(100*float64(refused.Load())/float64(max(1, placed.Load()+refused.Load())), "%refused")
}

// BenchmarkHoldsNoRelease: 100 buyers at once, each op one POST /v1/holds of
// the next 2 seats of a shuffled order, as buyers picking free seats off the
// seat map; nothing is released. Every 2,500 ops fill one 5,000-seat event, and
// the ops after them go to the next (made before the timer starts).
func BenchmarkHoldsNoRelease(b *testing.B) {
	first := newBenchEvent(b)
	holders := first.holders(b, 100)
	events := []benchEvent{first}
	for len(events)*2500 < b.N {
		events = append(events, first.another(b))
	}
	for _, e := range events {
		rand.Shuffle(len(e.seats), func(i, j int) { e.seats[i], e.seats[j] = e.seats[j], e.seats[i] })
	}
	var next, placed atomic.Int64
	elapsed := runHolders(b, holders, 100, func(h *holder) {
		i := int(next.Add(1) - 1)
		e, k := events[i/2500], i%2500
		if _, ok := h.hold(b, e.eventID, e.seats[2*k], e.seats[2*k+1]); ok {
			placed.Add(1)
		}
	})
	b.ReportMetric(float64(placed.Load())/elapsed, "holds/s")
}

// BenchmarkSeatMapWhileHolding: 100 readers of the 5,000-seat event's seat map
// while 50 buyers place and release holds on it. One op is one read; queries is
// how many seat-map queries all the reads of the run caused.
func BenchmarkSeatMapWhileHolding(b *testing.B) {
	e := newBenchEvent(b)
	holders := e.holders(b, 50)
	stop := make(chan struct{})
	var placed atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		h := <-holders
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if h.once(b) {
					placed.Add(1)
				}
			}
		})
	}
	path := "/v1/events/" + e.eventID + "/seats"
	queries := e.ts.Events.SeatMapQueries()
	b.SetParallelism(parallelism(100))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := &discardResponse{header: http.Header{}}
			e.ts.Handler.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			if w.status != http.StatusOK || w.bytes < 5000*100 {
				b.Errorf("seat map = %d, %d bytes", w.status, w.bytes)
			}
		}
	})
	elapsed := time.Since(start).Seconds()
	b.StopTimer()
	close(stop)
	wg.Wait()
	queries = e.ts.Events.SeatMapQueries() - queries
	b.ReportMetric(float64(b.N)/elapsed, "reads/s")
	b.ReportMetric(float64(queries), "queries")
	b.ReportMetric(float64(queries)/elapsed, "queries/s")
	b.ReportMetric(float64(placed.Load())/elapsed, "holds/s")
	b.Logf("%d reads in %.1fs caused %d seat-map queries", b.N, elapsed, queries)
}

// discardResponse is a ResponseWriter that counts the body and keeps none of
// it, so that a benchmark measures the server, not a 600 KB buffer per read.
type discardResponse struct {
	header http.Header
	status int
	bytes  int
}

func (w *discardResponse) Header() http.Header { return w.header }
func (w *discardResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.bytes += len(p)
	return len(p), nil
}
