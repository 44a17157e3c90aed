package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestDevicesAndGatesRaceForOneTicket: eight doors that admitted one ticket
// offline upload it at the same moment, each twice (a retry racing its first
// try), while four gates scan it online. Whatever the order, the ticket has
// exactly one admitted row: the earliest offline admission's. Every device
// scan is recorded once, a live admission displaced by it is the conflict,
// and each door's upload, replayed, answers what its row says: one
// admitted, the others conflicts.
func TestDevicesAndGatesRaceForOneTicket(t *testing.T) {
	t.Parallel()
	const doors, gates, rounds = 8, 4, 5
	db := postgresPool(t, 24)
	v := newVenue(t, db, "STAGEDOOR_LIMIT_SCANNER_KEY", "100000/1s")
	doorKeys, gateKeys := make([]string, doors), make([]string, gates)
	for i := range doorKeys {
		_, doorKeys[i] = newScannerKey(t, v.testServer, v.org, v.event)
	}
	for i := range gateKeys {
		_, gateKeys[i] = newScannerKey(t, v.testServer, v.org, "")
	}
	v.keysMadeAgo(t, 2*time.Hour)
	tickets := v.buy(t, rounds)
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	ctx := context.Background()

	for round, tk := range tickets {
		// Each round's dates are after the last round's: a door's upload is
		// believed from its last one on.
		base := start.Add(time.Duration(round) * 10 * time.Minute)
		dates := make([]time.Time, doors)
		for i, p := range rand.Perm(doors) {
			dates[i] = base.Add(time.Duration(p) * time.Minute)
		}
		id := func(d int) string { return fmt.Sprintf("r%d-d%d", round, d) }
		go1 := make(chan struct{})
		var wg sync.WaitGroup
		liveStatus := make([]int, gates)
		for d := range doors {
			for range 2 {
				wg.Go(func() {
					<-go1
					if a := v.uploadAnswer(t, doorKeys[d], deviceScan(id(d), tk.code, dates[d], true)); a.StatusCode != 200 {
						t.Errorf("door %d's upload = %d %s", d, a.StatusCode, a.raw)
					}
				})
			}
		}
		for g := range gates {
			wg.Go(func() {
				<-go1
				a := v.scanTB(t, gateKeys[g], tk.code)
				liveStatus[g] = a.StatusCode
				if a.StatusCode != 200 && (a.StatusCode != 409 || a.problem(t).Result != "already_scanned") {
					t.Errorf("gate %d = %d %s", g, a.StatusCode, a.raw)
				}
			})
		}
		close(go1)
		wg.Wait()

		earliest := slices.MinFunc(dates, func(a, b time.Time) int { return a.Compare(b) })
		var rows, admitted, admittedAtEarliest, liveAdmitted, liveConflicts int
		if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE result = 'admitted'),
			count(*) FILTER (WHERE result = 'admitted' AND scanned_at = $2 AND offline),
			count(*) FILTER (WHERE device_scan_id IS NULL AND result = 'admitted'),
			count(*) FILTER (WHERE device_scan_id IS NULL AND result = 'conflict')
			FROM scans WHERE ticket_id = $1`, tk.id, earliest).
			Scan(&rows, &admitted, &admittedAtEarliest, &liveAdmitted, &liveConflicts); err != nil {
			t.Fatal(err)
		}
		if at := v.scannedAt(t, tk.id); admitted != 1 || admittedAtEarliest != 1 || at == nil || !at.Equal(earliest) {
			t.Fatalf("round %d: %d admitted rows, %d at the earliest offline admission %v; ticket scanned at %v; want one, at it",
				round, admitted, admittedAtEarliest, earliest, at)
		}
		if rows != doors+gates || liveAdmitted != 0 {
			t.Errorf("round %d: %d rows (%d live ones still admitted), want %d: each device scan once, each live scan", round, rows, liveAdmitted, doors+gates)
		}
		if served := slices.Index(liveStatus, 200); served >= 0 && liveConflicts != 1 || served < 0 && liveConflicts != 0 {
			t.Errorf("round %d: live answers %v, %d live rows made conflicts; want the live admission, if any, displaced", round, liveStatus, liveConflicts)
		}
		said := map[string]int{}
		for d := range doors {
			got := v.upload(t, doorKeys[d], deviceScan(id(d), tk.code, dates[d], true))
			if !got[0].Replayed || !got[0].FirstScannedAt.Equal(earliest) {
				t.Errorf("round %d, door %d replayed = %+v, want the admission at %v", round, d, got[0], earliest)
			}
			said[got[0].Result]++
			if dates[d].Equal(earliest) != (got[0].Result == "admitted") {
				t.Errorf("round %d: door %d (dated %v) replayed %s", round, d, dates[d], got[0].Result)
			}
		}
		if said["admitted"] != 1 || said["conflict"] != doors-1 {
			t.Errorf("round %d: replays said %v, want one admitted and %d conflicts", round, said, doors-1)
		}
	}
	admissionsAreOne(t, v)
}
