package waitroom

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestJoinsSetTheExpiryOnce: 200 joins before the sale write the queue, and
// only the first sets the keys' expiry (and the state): each expiry is a
// command of its own on the room's master and its replica. The keys live at
// least until the last buyer's admission would end plus the margin, and at
// most a margin more.
//
// Not parallel: the counts are of a private server, and two started at once
// may be one (testenv.FreePort).
func TestJoinsSetTheExpiryOnce(t *testing.T) {
	rdb := privateClient(t, 0)
	s := New(rdb, Options{Timeout: 5 * time.Second})
	ctx := context.Background()
	const joins, rate = 200, 10
	ev := roomEvent(rate, time.Now().Add(time.Hour))
	before := commandCalls(t, rdb)
	for range joins {
		if _, err := s.Join(ctx, ev, ids.New()); err != nil {
			t.Fatal(err)
		}
	}
	calls := commandCalls(t, rdb)
	for cmd, want := range map[string]int64{"zadd": joins, "pexpireat": 3, "hset": 1} {
		if got := calls[cmd] - before[cmd]; got != want {
			t.Errorf("%d joins ran %s %d times, want %d", joins, cmd, got, want)
		}
	}
	least := ev.OnSaleAt.Add(joins*time.Second/rate + DefaultAdmission + keyMargin)
	for _, k := range []string{"q", "s"} { // a: nobody admitted yet, no key
		key := "wr:{" + ev.ID + "}:" + k
		at, err := rdb.PExpireTime(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		expires := time.UnixMilli(int64(at / time.Millisecond))
		if expires.Before(least) || expires.After(least.Add(keyMargin+time.Second)) {
			t.Errorf("%s expires at %s, want from %s to a margin later", key, expires, least)
		}
	}
}

// TestALoneBuyerJoinsAgain: the only buyer of a room joins again after her
// admission lapsed, which removes the queue's and the admissions' keys before
// writing them anew: every key still has an expiry.
func TestALoneBuyerJoinsAgain(t *testing.T) {
	rdb := privateClient(t, 0)
	s := New(rdb, Options{Timeout: 5 * time.Second, Admission: 200 * time.Millisecond})
	ctx := context.Background()
	ev := roomEvent(1000, time.Now().Add(-time.Minute))
	st, err := s.Join(ctx, ev, "ada")
	if err != nil || st.State != Admitted {
		t.Fatalf("join = %+v, %v; want admitted", st, err)
	}
	checkTTLs(t, rdb, "", 3)
	testenv.SleepUntilRedis(t, rdb, st.AdmittedUntil)
	again, err := s.Join(ctx, ev, "ada")
	if err != nil || again.State != Admitted || !again.AdmittedUntil.After(st.AdmittedUntil) {
		t.Fatalf("joining again = %+v, %v; want a new admission", again, err)
	}
	checkTTLs(t, rdb, "", 3)
}

// commandCalls is how many times the server has run each command, those of
// scripts included (INFO commandstats).
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		out[cmd], _ = strconv.ParseInt(calls, 10, 64)
	}
	return out
}
