package httpapi_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestTenPhonesScanOneTicket: ten phones, each with a key of its own, scan one
// ticket at the same moment, ticket after ticket: exactly one is admitted, the
// nine others are told already_scanned with the winner's time, and all ten
// attempts are in the audit.
func TestTenPhonesScanOneTicket(t *testing.T) {
	t.Parallel()
	// 16 connections, so that the ten scans really meet at the ticket's row.
	db := postgresPool(t, 16)
	v := newVenue(t, db)
	const phones = 10
	keys := make([]string, phones)
	for i := range keys {
		_, keys[i] = newScannerKey(t, v.testServer, v.org, "")
	}
	tickets := v.buy(t, 5)
	for _, tk := range tickets {
		replies := make([]answer, phones)
		atOnce(phones, func(i int) { replies[i] = v.scanTB(t, keys[i], tk.code) })

		admitted, already := 0, 0
		var firstAt time.Time
		for _, r := range replies {
			switch {
			case r.StatusCode == 200 && as[admissionJSON](t, r).Result == "admitted":
				admitted++
				firstAt = as[admissionJSON](t, r).ScannedAt
			case r.StatusCode == 409 && r.problem(t).Result == "already_scanned":
				already++
			default:
				t.Errorf("a phone got %d %s", r.StatusCode, r.raw)
			}
		}
		if admitted != 1 || already != phones-1 {
			t.Fatalf("ticket %s: %d admitted, %d already_scanned; want 1 and %d", tk.id, admitted, already, phones-1)
		}
		for _, r := range replies {
			if p := r.problem; r.StatusCode == 409 && !p(t).FirstScannedAt.Equal(firstAt) {
				t.Errorf("first_scanned_at %v, want the admission's %s", p(t).FirstScannedAt, firstAt)
			}
		}
		var recorded, admissions int
		if err := db.QueryRow(context.Background(), `
			SELECT count(*), count(*) FILTER (WHERE result = 'admitted') FROM scans WHERE ticket_id = $1`, tk.id).
			Scan(&recorded, &admissions); err != nil || recorded != phones || admissions != 1 {
			t.Errorf("audit of ticket %s: %d attempts, %d admissions (%v); want %d and 1", tk.id, recorded, admissions, err, phones)
		}
	}
}

// TestGateOpening: the doors open and one phone scans 50 tickets at once, its
// whole burst (scanner-key is 20/1s burst 50): all 50 are served. The next scan
// is refused with 429 scanner-key, retry_after_ms at most one token's 50 ms,
// unless the 50 took so long that tokens came back meanwhile (one every 50 ms):
// then it is refused once those are spent, and not one scan sooner. Another
// phone at the same address keeps scanning: the limit is keyed on the key.
func TestGateOpening(t *testing.T) {
	t.Parallel()
	db := postgresPool(t, 16)
	v := newVenue(t, db)
	phone, neighbour := v.key(t, v.event), v.key(t, v.event)
	tickets := v.buy(t, 60)

	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			<-start
			if a := v.scanTB(t, phone, tickets[i].code); a.StatusCode != 200 {
				t.Errorf("gate scan %d = %d %s, want 200 admitted", i+1, a.StatusCode, a.raw)
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()

	// Scan on (rescans: 409 already_scanned) until the first refusal.
	served := 0
	for i := 0; ; i++ {
		elapsed := time.Since(began)
		a := v.scanTB(t, phone, tickets[i%50].code)
		if a.StatusCode != 429 {
			served++
			if refills := int(elapsed/(50*time.Millisecond)) + 1; served > refills {
				t.Fatalf("scan %d served %d ms after the burst began; only %d tokens can have come back", 51+i, elapsed.Milliseconds(), refills)
			}
			continue
		}
		p := a.problem(t)
		ms := p.RetryAfterMS
		if !p.is("rate-limited") || p.Limit != "scanner-key" || ms <= 0 || ms > 50 ||
			a.Header.Get("Retry-After") != "1" || a.Header.Get("RateLimit-Policy") != `"scanner-key";q=50;w=3` {
			t.Errorf("scan %d refused with %s (Retry-After %q, RateLimit-Policy %q)", 51+i, a.raw,
				a.Header.Get("Retry-After"), a.Header.Get("RateLimit-Policy"))
		}
		t.Logf("scan #%d was refused, %d ms after the burst began; retry_after_ms %v", 51+i, elapsed.Milliseconds(), ms)
		break
	}
	if a := v.scanTB(t, neighbour, tickets[55].code); a.StatusCode != 200 {
		t.Errorf("another phone at the same address = %d %s, want 200", a.StatusCode, a.raw)
	}
	// The refusal spent nothing and reached no handler: it is not in the audit.
	var recorded int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM scans`).Scan(&recorded); err != nil || recorded != 50+served+1 {
		t.Errorf("%d attempts recorded (%v), want %d: the 429 is not one", recorded, err, 50+served+1)
	}
}

// TestScanningFailsOpenWhenRedisStops: with Redis gone, the gate keeps
// admitting, and scanner-key counts fail_open.
func TestScanningFailsOpenWhenRedisStops(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	p := startPayrailTB(t, 0)
	ts := newTestServer(t, map[string]string{"PAYRAIL_URL": p.url}, nil, redisClient(t, private.URL))
	v := &venue{testServer: ts, org: newAccount(t, ts, auth.Organizer), buyer: newAccount(t, ts, auth.Buyer)}
	v.event, v.seats = newEvent(t, ts, v.org, eventBody(1, 5))
	tickets := v.buy(t, 3)
	_, key := newScannerKey(t, ts, v.org, "")
	private.Stop()

	for i, tk := range tickets {
		if a := v.scanTB(t, key, tk.code); a.StatusCode != 200 || as[admissionJSON](t, a).Result != "admitted" {
			t.Fatalf("scan %d with Redis down = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	series := `stagedoor_ratelimit_decisions_total{decision="fail_open",limit="scanner-key"}`
	if got := metricValue(t, ts, series); got != "3" {
		t.Errorf("%s = %q, want 3", series, got)
	}
}
