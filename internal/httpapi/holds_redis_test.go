package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAnAdmittedHoldCostsTwoRedisCommands counts, with MONITOR on a
// redis-server of the test's own, the commands its clients send (a script's
// own commands inside it are not counted) while one buyer places holds: on an
// event with a waiting room after her first hold there (which reads her
// admission), and on one without. Each hold is one script (hold-buyer and her
// lease in flight, buyer-concurrency) and one ZREM giving the lease back:
// 2 commands. hold-organizer's tokens come from this instance's lease, taken a
// batch at a time (here one batch covers the run, so its calls are none of
// the window's; at its default of 200/1s a batch is 4 tokens, a quarter of a
// command a hold).
func TestAnAdmittedHoldCostsTwoRedisCommands(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb := redisClient(t, private.URL)
	ts := startInstance(t, instance{rdb: rdb, env: limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "1000/1s",
		"STAGEDOOR_LIMIT_HOLD_ORGANIZER", "1000000/1s", "STAGEDOOR_MAX_HELD_SEATS", "100")})
	org, ada := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	const n = 10
	room, roomSeats := newEvent(t, ts, org, roomEventBody(1, n+1, 1000, time.Now().Add(-time.Minute)))
	plain, plainSeats := newEvent(t, ts, org, eventBody(1, n+1))
	admitted(t, ts, ada, room)

	for _, c := range []struct {
		name  string
		event string
		seats []string
	}{{"with a waiting room", room, roomSeats}, {"without", plain, plainSeats}} {
		t.Run(c.name, func(t *testing.T) {
			if a := ts.request(t, "POST", "/v1/holds", holdBody(c.event, c.seats[0]), ada.bearer()...); a.StatusCode != 201 {
				t.Fatalf("first hold = %d %s", a.StatusCode, a.raw)
			}
			// A lease of hold-organizer's that ran out before the window is given
			// back in the background: let that refund land before counting, or it
			// is counted as the window's (seen on a loaded machine: 3 calls).
			ts.Limiter.Wait()
			mon := testenv.StartMonitor(t, private.Addr)
			start := time.Now()
			for i := 1; i <= n; i++ {
				if a := ts.request(t, "POST", "/v1/holds", holdBody(c.event, c.seats[i]), ada.bearer()...); a.StatusCode != 201 {
					t.Fatalf("hold %d = %d %s", i, a.StatusCode, a.raw)
				}
			}
			elapsed := time.Since(start)
			// The leases are given back after the answers: the last ZREM is
			// the last command of the holds.
			zrems := func() int {
				k := 0
				for _, cmd := range mon.Sent() {
					if cmd.Name == "zrem" {
						k++
					}
				}
				return k
			}
			waitFor(t, 5*time.Second, "the leases given back", func() bool { return zrems() >= n })
			mon.Sync(t) // and every command before them shown
			byKind := map[string]int{}
			total, organizer, handshakes := 0, 0, 0
			for _, cmd := range mon.Sent() {
				key := cmd.Key()
				switch {
				case cmd.Name == "hello" || cmd.Name == "client":
					handshakes++ // a new connection of the client's pool, not a hold's
					continue
				case cmd.Name == "echo":
					continue // the monitor's own mark
				case strings.Contains(key, "hold-organizer"):
					organizer++
					continue
				case strings.Contains(key, "{buyer:"):
					byKind[cmd.Name+" {buyer:…}"]++
				default:
					byKind[cmd.Name+" "+key]++
				}
				total++
			}
			t.Logf("%d holds: %d commands, %.2f a hold, %v; hold-organizer's lease: %d; connections' handshakes: %d",
				n, total, float64(total)/n, byKind, organizer, handshakes)
			if total > 2*n || byKind["evalsha {buyer:…}"] != n || byKind["zrem {buyer:…}"] != n {
				t.Errorf("%d holds sent %d commands (%v), want %d: one script and one ZREM a hold", n, total, byKind, 2*n)
			}
			// One batch covers them, but what is left of it is given back after
			// 500 ms (on a loaded machine, within the window): then a refund and
			// a lease more each 500 ms. So fewer calls than holds while holds
			// come faster than one a 250 ms; on a machine so loaded that they
			// do not (seen in CI: 340 ms a hold under -race), the bound is the
			// lease's, two calls a 500 ms.
			// One more: the give-back of a batch leased before the window (the
			// previous subtest's), which can fall within it (seen in CI: 3 calls
			// in 226 ms).
			most := 2*(int(elapsed/(500*time.Millisecond))+1) + 1
			if elapsed < n*250*time.Millisecond {
				most = min(n-1, most)
			}
			if organizer > most {
				t.Errorf("%d holds in %s made %d calls for hold-organizer's lease, want at most %d: its tokens are leased a batch at a time",
					n, elapsed, organizer, most)
			}
		})
	}
}
