package conn_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// failoverTimeout is the deadline of each call in TestAFailoverFailsOnlyTheDeadMastersKeys:
// the production 50 ms is shorter than the stalls of a -race build on a
// loaded machine, and what the test asks is which keys fail, not how fast
// Redis answers.
const failoverTimeout = 250 * time.Millisecond

// decided is one decision or room call of TestAFailoverFailsOnlyTheDeadMastersKeys.
type decided struct {
	fetches  uint64 // slot maps the client had fetched when it started
	outcomes []ratelimit.Outcome
	err      error // a room call's
}

// TestAFailoverFailsOnlyTheDeadMastersKeys kills one master of a private 3+3
// cluster by its pid while eight callers decide buckets and poll rooms on
// every master, as an instance does (conn.Redis, conn.NodeOf, a breaker and
// deadlines per node). Until its replica has taken over, and after:
//   - every decision of a bucket on a healthy master is made in Redis: no
//     fail_open, no fallback, not even beside a bucket on the dead master in
//     the same request;
//   - every room on a healthy master answers;
//   - the dead master's buckets follow their policy (a FailOpen limit fails
//     open, a Fallback limit decides in process) and its rooms fail closed;
//     once the client has fetched the slot map twice after the promotion,
//     every decision and room call on them is made in Redis again;
//   - the dead node's outage lines end, naming the node that serves its keys.
func TestAFailoverFailsOnlyTheDeadMastersKeys(t *testing.T) {
	c := testenv.StartCluster(t)
	ctx := context.Background()
	r := newRig(t, c)
	cluster, lim, rooms, logs, prefix := r.client, r.lim, r.rooms, r.logs, r.prefix

	// Identities and events by the master of their keys' slot.
	victim := c.Masters(t)[0]
	masterOf := slotMasters(t, c, victim)
	var healthy, doomed []string // identities whose buckets of both limits are on a healthy master, on the victim
	for i := 0; len(healthy) < 200 || len(doomed) < 20; i++ {
		id := strconv.Itoa(i)
		open, fallback := masterOf(prefix+"rl:{open:"+id+"}"), masterOf(prefix+"rl:{fallback:"+id+"}")
		switch {
		case open != victim && fallback != victim && len(healthy) < 200:
			healthy = append(healthy, id)
		case open == victim && fallback == victim && len(doomed) < 20:
			doomed = append(doomed, id)
		}
	}
	var healthyRooms, doomedRooms []event.Info
	for i := 0; len(healthyRooms) < 8 || len(doomedRooms) < 2; i++ {
		ev := event.Info{ID: fmt.Sprintf("event-%d", i), OnSaleAt: time.Now().Add(-time.Minute),
			WaitingRoom: &event.WaitingRoom{AdmitPerSecond: 1000}}
		if masterOf(prefix+"wr:{"+ev.ID+"}:q") == victim {
			doomedRooms = append(doomedRooms, ev)
		} else {
			healthyRooms = append(healthyRooms, ev)
		}
	}
	for _, ev := range append(append([]event.Info(nil), healthyRooms...), doomedRooms...) {
		if _, err := rooms.Join(ctx, ev, "buyer"); err != nil {
			t.Fatal(err)
		}
	}

	var got testenv.Record[decided] // by kind
	outcomes := func(d ratelimit.Decision) []ratelimit.Outcome {
		out := make([]ratelimit.Outcome, len(d.Results))
		for i, r := range d.Results {
			out[i] = r.Outcome
		}
		return out
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; !stop.Load(); i++ {
				h, dd := healthy[i%len(healthy)], doomed[i%len(doomed)]
				name := ratelimit.Name([]string{"open", "fallback"}[(i/4)%2])
				fetches := cluster.SlotMapFetches()
				switch i % 4 {
				case 0, 1: // a healthy bucket alone
					got.Add("healthy", decided{fetches: fetches, outcomes: outcomes(lim.Allow(ctx, ratelimit.Check{Limit: name, Key: h}))})
				case 2: // a doomed bucket alone
					got.Add("doomed "+string(name), decided{fetches: fetches, outcomes: outcomes(lim.Allow(ctx, ratelimit.Check{Limit: name, Key: dd}))})
				case 3: // a healthy bucket and a doomed one in one request
					got.Add("healthy beside doomed", decided{fetches: fetches,
						outcomes: outcomes(lim.Allow(ctx, ratelimit.Check{Limit: "open", Key: h}, ratelimit.Check{Limit: "fallback", Key: dd}))})
				}
				if w < 2 { // two of the callers poll the rooms too
					ev, kind := healthyRooms[i%len(healthyRooms)], "healthy room"
					if i%4 == 0 {
						ev, kind = doomedRooms[i%len(doomedRooms)], "doomed room"
					}
					fetches := cluster.SlotMapFetches()
					_, err := rooms.Status(ctx, ev, "buyer")
					got.Add(kind, decided{fetches: fetches, err: err})
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	count := func(kind string, after uint64) int {
		return got.Count(kind, func(d decided) bool { return d.fetches >= after })
	}
	testenv.Eventually(t, 0, func() bool { return count("doomed open", 0) >= 20 && count("doomed room", 0) >= 20 }, "decisions before the kill")

	c.Kill(t, victim)
	c.WaitHealthy(t, 60*time.Second) // every live node: each slot has a live master
	followed := cluster.SlotMapFetches() + 2
	promoted := c.MasterOf(t, prefix+"wr:{"+doomedRooms[0].ID+"}:q")
	testenv.Eventually(t, 0, func() bool { return cluster.SlotMapFetches() >= followed }, "two slot maps fetched after the promotion")
	testenv.Eventually(t, 0, func() bool {
		return count("doomed open", followed) >= 20 && count("doomed fallback", followed) >= 20 && count("doomed room", followed) >= 20
	}, "decisions after the client followed")
	// The outage lines end at the next sweep after the client follows (a
	// second at most, sweepEvery); a minute is the test's patience, after
	// which it shows the lines it has, not a hang until the binary's timeout.
	if !testenv.Poll(time.Minute, 20*time.Millisecond, func() bool {
		return outageEnded(logs.String(), "ratelimit", victim, promoted) && outageEnded(logs.String(), "waitroom", victim, promoted)
	}) {
		t.Fatalf("the dead node %s's outage lines did not end naming %s within a minute of the client following; its lines:\n%s",
			victim, promoted, outageLines(logs.String(), victim))
	}
	stop.Store(true)
	wg.Wait()

	tally := func(kind string, want func(d decided) bool) (n, bad, after, badAfter int) {
		for _, d := range got.Of(kind) {
			ok := want(d)
			n++
			if !ok {
				bad++
			}
			if d.fetches >= followed {
				after++
				if !ok {
					badAfter++
				}
			}
		}
		return n, bad, after, badAfter
	}
	inRedis := func(d decided) bool {
		for _, o := range d.outcomes {
			if o != ratelimit.OutcomeAllowed {
				return false
			}
		}
		return true
	}
	// The healthy buckets: all decided in Redis, alone or beside a doomed one.
	n, bad, _, _ := tally("healthy", inRedis)
	if bad != 0 {
		t.Errorf("%d of %d decisions of buckets on healthy masters were not made in Redis (fail_open or fallback)", bad, n)
	}
	beside, badBeside, _, _ := tally("healthy beside doomed", func(d decided) bool { return d.outcomes[0] == ratelimit.OutcomeAllowed })
	if badBeside != 0 {
		t.Errorf("%d of %d decisions of a healthy bucket beside a doomed one were not made in Redis", badBeside, beside)
	}
	// The doomed buckets: by their policy while the master is down, in Redis after.
	for _, c := range []struct {
		limit  string
		policy ratelimit.Outcome
	}{{"open", ratelimit.OutcomeFailOpen}, {"fallback", ratelimit.OutcomeFallbackAllowed}} {
		n, bad, after, badAfter := tally("doomed "+c.limit, func(d decided) bool { return d.outcomes[0] == ratelimit.OutcomeAllowed })
		_, offPolicy, _, _ := tally("doomed "+c.limit, func(d decided) bool {
			return d.outcomes[0] == ratelimit.OutcomeAllowed || d.outcomes[0] == c.policy
		})
		if bad == 0 || offPolicy != 0 || badAfter != 0 {
			t.Errorf("limit %s on the dead master: %d of %d decisions not made in Redis (want some), %d of them other than %s (want none), %d of the %d after the client followed (want none)",
				c.limit, bad, n, offPolicy, c.policy, badAfter, after)
		}
		t.Logf("limit %s on the dead master: %d of %d decisions %s", c.limit, bad, n, c.policy)
	}
	// The rooms: the healthy ones always answer; the doomed ones fail closed, then answer.
	answered := func(d decided) bool { return d.err == nil }
	n, bad, _, _ = tally("healthy room", answered)
	if bad != 0 {
		t.Errorf("%d of %d calls of rooms on healthy masters failed: the room failed closed because another master died", bad, n)
	}
	dn, dbad, dafter, dbadAfter := tally("doomed room", answered)
	_, notClosed, _, _ := tally("doomed room", func(d decided) bool { return d.err == nil || errors.Is(d.err, waitroom.ErrUnavailable) })
	if dbad == 0 || notClosed != 0 || dbadAfter != 0 {
		t.Errorf("rooms on the dead master: %d of %d calls failed (want some), %d not as ErrUnavailable (want none), %d of the %d after the client followed (want none)",
			dbad, dn, notClosed, dbadAfter, dafter)
	}
	t.Logf("healthy buckets: %d decisions alone and %d beside a doomed one, all in Redis; healthy rooms: %d calls, all answered; rooms on the dead master: %d of %d calls closed",
		len(got.Of("healthy")), beside, n, dbad, dn)
}

// rig is what an instance makes of a cluster for the limiter and the waiting
// room (internal/app): a cluster client from conn.Redis, and a limiter and
// rooms with a breaker and deadlines per node (conn.NodeOf), failoverTimeout
// each, logging to logs.
type rig struct {
	client *conn.ClusterClient
	lim    *ratelimit.Limiter
	rooms  *waitroom.Service
	logs   *testenv.LogBuffer
	prefix string
}

// newRig makes a rig on c with two limits of 1,000,000 a second: "open"
// (FailOpen) and "fallback" (Fallback).
func newRig(t *testing.T, c *testenv.Cluster) rig {
	t.Helper()
	logs := &testenv.LogBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	rdb, err := conn.Redis(context.Background(), c.URL, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	nodeOf := func(ctx context.Context, key string) string { return conn.NodeOf(ctx, rdb, key) }
	const prefix = "fo:"
	limit := ratelimit.Setting{Limit: ratelimit.PerSecond(1_000_000), Mode: ratelimit.Enforce}
	return rig{client: rdb.(*conn.ClusterClient), logs: logs, prefix: prefix,
		lim: ratelimit.New(rdb, ratelimit.Options{Prefix: prefix, Timeout: failoverTimeout, NodeOf: nodeOf, Logger: logger, SplitBySlot: true,
			Limits: []ratelimit.Definition{
				{Name: "open", Setting: limit, Policy: ratelimit.FailOpen},
				{Name: "fallback", Setting: limit, Policy: ratelimit.Fallback},
			}}),
		rooms: waitroom.New(rdb, waitroom.Options{Prefix: prefix, Timeout: failoverTimeout, NodeOf: nodeOf, Logger: logger})}
}

// slotMasters returns the master that serves a key before the kill, asking a
// node other than victim for the slot map once and for each key's slot.
func slotMasters(t *testing.T, c *testenv.Cluster, victim string) func(key string) string {
	t.Helper()
	addr := c.Live()[0]
	if addr == victim {
		addr = c.Live()[1]
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	shards, err := client.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return func(key string) string {
		slot, err := client.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range shards {
			for _, r := range sh.Slots {
				if r.Start <= slot && slot <= r.End {
					for _, n := range sh.Nodes {
						if n.Role == "master" {
							return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
						}
					}
				}
			}
		}
		t.Fatalf("no master serves slot %d", slot)
		return ""
	}
}

// outageLines are the lines of logs that name node.
func outageLines(logs, node string) string {
	var b strings.Builder
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `"node":"`+node+`"`) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// outageEnded reports whether logs have the INFO line that ends node's outage
// for caller, saying that now is the node serving its keys.
func outageEnded(logs, caller, node, now string) bool {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `"msg":"dependency available again"`) && strings.Contains(line, `"caller":"`+caller+`"`) &&
			strings.Contains(line, `"node":"`+node+`"`) && strings.Contains(line, `"now_served_by":"`+now+`"`) {
			return true
		}
	}
	return false
}

// TestAStalledMasterFailsOnlyTheCallsItCaught stops a master (SIGSTOP) for
// one and a half deadlines while sixteen callers decide buckets and poll a
// room on it and on the other masters. Only the calls in flight when it
// stopped fail (at most one a caller): its breaker never opens, so the stall
// does not fail every key it serves for the breaker's cooldown, and every
// call started after the first failure is made in Redis; the other masters'
// buckets never fail.
func TestAStalledMasterFailsOnlyTheCallsItCaught(t *testing.T) {
	c := testenv.StartCluster(t)
	ctx := context.Background()
	r := newRig(t, c)
	stalled := c.Masters(t)[0]
	masterOf := slotMasters(t, c, stalled)
	var on, off []string // identities whose "open" bucket is on the stalled master, elsewhere
	for i := 0; len(on) < 50 || len(off) < 50; i++ {
		id := strconv.Itoa(i)
		if masterOf(r.prefix+"rl:{open:"+id+"}") == stalled {
			on = append(on, id)
		} else {
			off = append(off, id)
		}
	}
	var room event.Info
	for i := 0; room.ID == ""; i++ {
		if id := fmt.Sprintf("event-%d", i); masterOf(r.prefix+"wr:{"+id+"}:q") == stalled {
			room = event.Info{ID: id, OnSaleAt: time.Now().Add(-time.Minute), WaitingRoom: &event.WaitingRoom{AdmitPerSecond: 1000}}
		}
	}
	if _, err := r.rooms.Join(ctx, room, "buyer"); err != nil {
		t.Fatal(err)
	}

	const callers = 16
	var caught, elsewhere, calls atomic.Int64 // calls on the stalled master not made in Redis; elsewhere; all
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() {
			for i := w; !stop.Load(); i++ {
				switch i % 3 {
				case 0:
					if r.lim.Allow(ctx, ratelimit.Check{Limit: "open", Key: on[i%len(on)]}).Results[0].Outcome != ratelimit.OutcomeAllowed {
						caught.Add(1)
					}
				case 1:
					if _, err := r.rooms.Status(ctx, room, "buyer"); err != nil {
						caught.Add(1)
					}
				case 2:
					if r.lim.Allow(ctx, ratelimit.Check{Limit: "open", Key: off[i%len(off)]}).Results[0].Outcome != ratelimit.OutcomeAllowed {
						elsewhere.Add(1)
					}
				}
				calls.Add(1)
				time.Sleep(time.Millisecond)
			}
		})
	}
	testenv.Eventually(t, 0, func() bool { return calls.Load() >= 20*callers }, "calls before the stall")
	c.Pause(t, stalled, failoverTimeout*3/2)
	resumed := calls.Load()
	testenv.Eventually(t, 0, func() bool { return calls.Load() >= resumed+100*callers }, "calls after the stall")
	stop.Store(true)
	wg.Wait()

	opened := strings.Contains(r.logs.String(), `"msg":"circuit breaker"`)
	t.Logf("%s stalled for %v: %d of %d calls failed on it, %d elsewhere; a breaker opened: %v",
		stalled, failoverTimeout*3/2, caught.Load(), calls.Load(), elsewhere.Load(), opened)
	if caught.Load() > callers || opened {
		t.Errorf("the stall failed %d calls on the stalled master (want at most the %d in flight) and opened a breaker: %v; its log:\n%s",
			caught.Load(), callers, opened, r.logs.String())
	}
	if elsewhere.Load() != 0 {
		t.Errorf("%d decisions on the other masters were not made in Redis", elsewhere.Load())
	}
}
