package httpapi_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkScans10Keys: ten phones, each with a scanner key of its own, scan
// at once, in-process through the whole handler (the rings, the key's lookup,
// scanner-key decided in Redis, the conditional write and its audit row)
// against the real database, on the production pool of 24 connections.
// scanner-key is raised to 1000000/1s so that the figure is the server's, not
// the limit's (at the default 20/1s each, ten keys would be held to 200 scans/s).
//
//   - admit: every scan admits a fresh ticket (one statement each);
//   - rescan: every scan finds its ticket already scanned (three statements:
//     the write that admits nothing, the read that says why, the audit row).
//
// Run with a fixed count so that admit never runs out of fresh tickets:
//
//	go test -run '^$' -bench Scans10Keys -benchtime 2000x ./internal/httpapi
func BenchmarkScans10Keys(b *testing.B) {
	const phones, fresh = 10, 2500
	db := postgresPool(b, 24)
	v := newVenue(b, db, "STAGEDOOR_LIMIT_SCANNER_KEY", "1000000/1s", "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "100000/1s")
	v.event, v.seats = newEvent(b, v.testServer, v.org, eventBody(50, 60))
	tickets := v.buy(b, fresh)
	keys := make([]string, phones)
	for i := range keys {
		_, keys[i] = newScannerKey(b, v.testServer, v.org, "")
	}
	bodies := make([]string, len(tickets))
	for i, tk := range tickets {
		bodies[i] = fmt.Sprintf(`{"code":%q}`, tk.code)
	}

	var used atomic.Int64 // fresh tickets spent by admit, across its runs
	b.Run("admit", func(b *testing.B) {
		scanAtOnce(b, v, keys, func() (string, int) {
			i := used.Add(1) - 1
			if i >= int64(len(bodies)) {
				return bodies[i%int64(len(bodies))], 409 // ran out: a rescan
			}
			return bodies[i], 200
		})
	})
	var n atomic.Int64
	b.Run("rescan", func(b *testing.B) {
		if used.Load() == 0 { // admit did not run: scan one ticket to rescan
			v.serve("POST", "/v1/scans", bodies[0], "X-Api-Key", keys[0])
			used.Store(1)
		}
		scanAtOnce(b, v, keys, func() (string, int) {
			return bodies[(n.Add(1)-1)%min(int64(len(bodies)), used.Load())], 409
		})
	})
}

// scanAtOnce makes b.N scans from the phones at once, each phone scanning the
// next body until b.N are done, and reports scans/s.
func scanAtOnce(b *testing.B, v *venue, keys []string, next func() (body string, want int)) {
	var done atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, key := range keys {
		wg.Go(func() {
			for done.Add(1) <= int64(b.N) {
				body, want := next()
				if rec := v.serve("POST", "/v1/scans", body, "X-Api-Key", key); rec.Code != want {
					b.Errorf("scan = %d %s, want %d", rec.Code, rec.Body, want)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "scans/s")
}

// BenchmarkUpload200: a door uploads 200 scans it admitted offline, of
// tickets admitted before elsewhere (each a conflict: the ticket's row locked,
// its audit row written), in-process through the whole handler; one op is one
// upload. scanner-key is raised so that the figure is the server's.
//
//	go test -run '^$' -bench Upload200 -benchtime 20x ./internal/httpapi
func BenchmarkUpload200(b *testing.B) {
	db := postgresPool(b, 24)
	v := newVenue(b, db, "STAGEDOOR_LIMIT_SCANNER_KEY", "1000000/1s", "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "100000/1s")
	v.event, v.seats = newEvent(b, v.testServer, v.org, eventBody(20, 10))
	tickets := v.buy(b, 200)
	_, gate := newScannerKey(b, v.testServer, v.org, v.event)
	for _, tk := range tickets {
		if rec := v.serve("POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, tk.code), "X-Api-Key", gate); rec.Code != 200 {
			b.Fatalf("scan = %d %s", rec.Code, rec.Body)
		}
	}
	_, door := newScannerKey(b, v.testServer, v.org, v.event)
	if _, err := db.Exec(b.Context(), `UPDATE scanner_keys SET created_at = now() - interval '1 hour'`); err != nil {
		b.Fatal(err)
	}
	base := time.Now().Add(-50 * time.Minute)
	scans := make([]string, len(tickets))
	b.ResetTimer()
	for op := range b.N {
		for i, tk := range tickets { // later each upload: a door uploads oldest first
			at := base.Add(time.Duration(op*len(tickets)+i) * time.Millisecond)
			scans[i] = deviceScan(fmt.Sprintf("op%d-%d", op, i), tk.code, at, true)
		}
		if rec := v.serve("POST", "/v1/scans/batch", uploadBody(scans...), "X-Api-Key", door); rec.Code != 200 {
			b.Fatalf("upload = %d %s", rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(tickets))/b.Elapsed().Seconds(), "scans/s")
}
