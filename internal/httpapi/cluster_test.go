package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// onCluster starts n instances of one deployment on a private 3+3 Redis
// Cluster, each with its own cluster client (as serve makes it from REDIS_URL).
func onCluster(t *testing.T, c *testenv.Cluster, n int, kv ...string) []*testServer {
	t.Helper()
	db, prefix := testenv.Postgres(t), testenv.RedisPrefix(t)
	out := make([]*testServer, n)
	for i := range out {
		rdb, err := conn.Redis(context.Background(), c.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rdb.(*conn.ClusterClient); !ok {
			t.Fatalf("REDIS_URL %s made a %T, not a cluster client", c.URL, rdb)
		}
		t.Cleanup(func() { rdb.Close() })
		out[i] = startInstance(t, instance{env: limitEnv(kv...), db: db, rdb: rdb, redisPrefix: prefix})
	}
	return out
}

// bucketKey is the Redis key of a limit's bucket for identity, as the limiter
// writes it (internal/ratelimit: <prefix>rl:{<limit>:<identity>}, or
// <prefix>rl:{buyer:<identity>}:hold-buyer for a limit with a tag).
func bucketKey(ts *testServer, limit, identity string) string {
	return ts.Limiter.Key(ratelimit.Name(limit), identity)
}

// roomKey is the key of an event's waiting room (internal/waitroom).
func roomKey(ts *testServer, eventID string) string {
	return ts.Config.RedisPrefix + "wr:{" + eventID + "}:q"
}

// TestLimitsOnACluster: the limits of the contract, on a real cluster, across
// two instances: hold-buyer counted once for both; a hold refused by
// hold-organizer (another node than the buyer's bucket) spends none of the
// buyer's tokens; login limits, scanner-key and the waiting room.
func TestLimitsOnACluster(t *testing.T) {
	t.Parallel()
	c := testenv.StartCluster(t)
	in := onCluster(t, c, 2, "STAGEDOOR_ADMIN_TOKEN", adminToken, "STAGEDOOR_LIMIT_HOLD_BUYER", "4/1m", "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "1000/1s",
		"STAGEDOOR_LIMIT_SCANNER_KEY", "5/1m", "STAGEDOOR_TRUSTED_PROXIES", "127.0.0.1/32")
	one, two := in[0], in[1]
	org := newAccount(t, one, auth.Organizer)
	event, seats := newEvent(t, one, org, eventBody(2, 10))

	// hold-buyer: 4 a minute for the buyer, on whichever instance.
	buyer := newAccount(t, one, auth.Buyer)
	for i := range 4 {
		ts := in[i%2]
		a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...)
		if a.StatusCode != 201 {
			t.Fatalf("hold %d on instance %d = %d %s", i+1, i%2+1, a.StatusCode, a.raw)
		}
	}
	if a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[4]), buyer.bearer()...); a.StatusCode != 429 || a.problem(t).Limit != "hold-buyer" {
		t.Errorf("the 5th hold of 4/1m across two instances = %d %s, want 429 hold-buyer", a.StatusCode, a.raw)
	}

	// The two-bucket decision across two nodes: the organizer's bucket (made
	// empty) refuses, and the buyer's bucket on another node is refunded.
	var other testAccount
	for i := 0; ; i++ {
		other = newAccount(t, one, auth.Buyer)
		if c.MasterOf(t, bucketKey(one, "hold-buyer", other.id)) != c.MasterOf(t, bucketKey(one, "hold-organizer", org.id)) {
			break
		}
		if i > 50 {
			t.Fatal("no buyer whose bucket is on another node than the organizer's")
		}
	}
	one.putLimit(t, "hold-organizer", `{"mode":"enforce","rate":1,"period_ms":60000,"burst":1}`) // in force on one at once
	spender := newAccount(t, one, auth.Buyer)
	if a := one.request(t, "POST", "/v1/holds", holdBody(event, seats[10]), spender.bearer()...); a.StatusCode != 201 {
		t.Fatalf("the hold that empties the organizer's bucket = %d %s", a.StatusCode, a.raw)
	}
	for i := range 3 {
		if a := one.request(t, "POST", "/v1/holds", holdBody(event, seats[11]), other.bearer()...); a.StatusCode != 429 || a.problem(t).Limit != "hold-organizer" {
			t.Fatalf("refused hold %d = %d %s, want 429 hold-organizer", i+1, a.StatusCode, a.raw)
		}
	}
	one.putLimit(t, "hold-organizer", `{"mode":"off"}`)
	for i := range 4 { // the three refusals cost the buyer nothing: the whole bucket is left
		if a := one.request(t, "POST", "/v1/holds", holdBody(event, seats[11+i]), other.bearer()...); a.StatusCode != 201 {
			t.Fatalf("hold %d of the buyer after the refusals = %d %s: a refused hold spent the buyer's token", i+1, a.StatusCode, a.raw)
		}
	}

	// Logins: the 11th attempt from one address within a minute.
	register(t, one, "buyer", "cluster-login@example.com")
	for i := range 10 {
		if a := in[i%2].request(t, "POST", "/v1/login", loginBody("cluster-login@example.com", "wrong password"), "X-Forwarded-For", "198.51.100.9"); a.StatusCode != 401 {
			t.Fatalf("login %d = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	if a := two.request(t, "POST", "/v1/login", loginBody("cluster-login@example.com", "correct horse"), "X-Forwarded-For", "198.51.100.9"); a.StatusCode != 429 {
		t.Errorf("the 11th login from one address = %d, want 429", a.StatusCode)
	}

	// scanner-key: 5 a minute for the key, on whichever instance.
	_, key := newScannerKey(t, one, org, "")
	for i := range 5 {
		if a := in[i%2].request(t, "POST", "/v1/scans", `{"code":"NOT-A-TICKET"}`, "X-Api-Key", key); a.StatusCode != 404 {
			t.Fatalf("scan %d = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	if a := one.request(t, "POST", "/v1/scans", `{"code":"NOT-A-TICKET"}`, "X-Api-Key", key); a.StatusCode != 429 {
		t.Errorf("the 6th scan of 5/1m = %d, want 429", a.StatusCode)
	}

	// The waiting room, on the cluster, from either instance.
	room, _ := newEvent(t, one, org, roomEventBody(1, 2, 1000, time.Now().Add(-time.Minute)))
	admitted(t, two, newAccount(t, one, auth.Buyer), room)

	if a := one.request(t, "GET", "/readyz", ""); !strings.Contains(string(a.raw), `"redis_nodes"`) || strings.Contains(string(a.raw), "down") ||
		!strings.Contains(string(a.raw), `"redis_redundancy":"ok"`) {
		t.Errorf("readyz on the cluster: %s, want every node ok and every master with a replica", a.raw)
	}
}

// TestASingleClusterNodeURLIsACluster: REDIS_URL naming one node of a cluster
// is used as the cluster's seed (every multi-key script then stays in its
// slot), never as a single server whose scripts fail with CROSSSLOT; a
// cluster node with a database number is refused with a message saying how to
// write it.
func TestASingleClusterNodeURLIsACluster(t *testing.T) {
	t.Parallel()
	c := testenv.StartCluster(t)
	rdb, err := conn.Redis(context.Background(), "redis://"+c.Addrs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if _, ok := rdb.(*conn.ClusterClient); !ok {
		t.Fatalf("redis://%s made a %T, want a cluster client", c.Addrs[0], rdb)
	}
	if _, err := conn.Redis(context.Background(), "redis://"+c.Addrs[0]+"/3", nil); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("a cluster node with database 3: %v, want a refusal saying how to write REDIS_URL", err)
	}
	ts := startInstance(t, instance{env: limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "2/1m"), rdb: rdb})
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 5))
	for i := range 2 {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[i]), buyer.bearer()...); a.StatusCode != 201 {
			t.Fatalf("hold %d = %d %s", i+1, a.StatusCode, a.raw)
		}
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[2]), buyer.bearer()...); a.StatusCode != 429 {
		t.Errorf("the 3rd hold of 2/1m = %d %s, want 429: the limit was not enforced", a.StatusCode, a.raw)
	}
	if v := metricValue(t, ts, `stagedoor_ratelimit_decisions_total{decision="fail_open",limit="hold-buyer"}`); v != "" && v != "0" {
		t.Errorf("%s decisions failed open", v)
	}
}

// failoverWindows is what clients saw of a master's death: how long after the
// kill, and after the replica's promotion, the room on that master answered
// 503 and the buyer's bucket on it was decided without Redis (failed open);
// whether every request on them that started once the instance had fetched
// the slot map twice more after the promotion (followed) was served; and what
// the room and bucket on a healthy master saw meanwhile.
type failoverWindows struct {
	promotedAfter                 time.Duration
	room503, roomAfterPromotion   time.Duration
	bucketOpen, bucketAfterPromo  time.Duration
	healthyRoom503, healthyFailed int
	// followedRoom and followedBucket are the requests on the dead master's
	// room and bucket that started after the instance followed; lateRoom and
	// lateBucket those of them that failed all the same.
	followedRoom, followedBucket int
	lateRoom, lateBucket         int
	logs                         string // the instance's log
	// readyz is /readyz once it says redundancy is lost, and promoted the
	// replica that took over.
	readyz   answer
	promoted string
}

// healthyFailures is how many of the instance's room and bucket calls to the
// masters have failed so far.
func healthyFailures(t *testing.T, ts *testServer, masters []string) int {
	t.Helper()
	total := 0
	for _, node := range masters {
		for _, caller := range []string{"waitroom", "ratelimit"} {
			if v := metricValue(t, ts, fmt.Sprintf(`stagedoor_redis_calls_total{caller=%q,node=%q,result="failed"}`, caller, node)); v != "" {
				var n int
				fmt.Sscan(v, &n)
				total += n
			}
		}
	}
	return total
}

// followFetches is how many slot maps the instance fetches, once every live
// node says the replica is master, before every call must find it: the fetch
// under way at the promotion may have read the old map; the next one starts
// after it. go-redis fetches one map at a time and uses it before the next.
const followFetches = 2

// failover kills the master that serves a waiting room and a buyer's bucket
// while both are in use, on an instance whose Redis client is rdb.
func failover(t *testing.T, c *testenv.Cluster, client *conn.ClusterClient) failoverWindows {
	t.Helper()
	t.Cleanup(func() { client.Close() })
	var logs testenv.LogBuffer
	ts := startInstance(t, instance{env: limitEnv("STAGEDOOR_REDIS_TIMEOUT", "250ms", "STAGEDOOR_ADMIN_TOKEN", adminToken,
		"STAGEDOOR_LIMIT_HOLD_BUYER", "100000/1s"), rdb: client, logs: &logs})
	ts.putLimit(t, "hold-organizer", `{"mode":"off"}`) // a hold's RateLimit headers are then hold-buyer's alone
	org := newAccount(t, ts, auth.Organizer)

	victim := c.MasterOf(t, roomKey(ts, ids.New()))
	var doomedRoom, healthyRoom string
	for i := 0; doomedRoom == "" || healthyRoom == ""; i++ {
		id, _ := newEvent(t, ts, org, roomEventBody(1, 1, 1000, time.Now().Add(-time.Minute)))
		if m := c.MasterOf(t, roomKey(ts, id)); m == victim && doomedRoom == "" {
			doomedRoom = id
		} else if m != victim && healthyRoom == "" {
			healthyRoom = id
		}
		if i > 60 {
			t.Fatal("no rooms on two masters")
		}
	}
	var doomedBuyer, healthyBuyer testAccount
	for i := 0; doomedBuyer.id == "" || healthyBuyer.id == ""; i++ {
		b := newAccount(t, ts, auth.Buyer)
		if m := c.MasterOf(t, bucketKey(ts, "hold-buyer", b.id)); m == victim && doomedBuyer.id == "" {
			doomedBuyer = b
		} else if m != victim && healthyBuyer.id == "" {
			healthyBuyer = b
		}
		if i > 60 {
			t.Fatal("no buyers on two masters")
		}
	}
	plain, seats := newEvent(t, ts, org, eventBody(10, 10))
	admitted(t, ts, doomedBuyer, doomedRoom)
	admitted(t, ts, healthyBuyer, healthyRoom)

	type sample struct {
		at      time.Time
		fetches uint64 // slot maps the instance had fetched when it started
		ok      bool
	}
	var samples testenv.Record[sample] // by name
	var stop atomic.Bool
	var wg sync.WaitGroup
	loop := func(name string, do func(i int) bool) {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				at, fetches := time.Now(), client.SlotMapFetches()
				ok := do(i)
				samples.Add(name, sample{at, fetches, ok})
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	poll := func(room string, who testAccount) func(int) bool {
		return func(int) bool { return ts.request(t, "GET", queuePath(room), "", who.bearer()...).StatusCode == 200 }
	}
	// A hold decided in Redis carries the RateLimit headers; one failed open, none.
	holdAndRelease := func(who testAccount, seat string) func(int) bool {
		return func(int) bool {
			a := ts.request(t, "POST", "/v1/holds", holdBody(plain, seat), who.bearer()...)
			if a.StatusCode == 201 {
				ts.request(t, "DELETE", "/v1/holds/"+as[holdJSON](t, a).ID, "", who.bearer()...)
			}
			return a.StatusCode == 201 && a.Header.Get("RateLimit") != ""
		}
	}
	started := func(name string) int { return len(samples.Of(name)) }
	loop("doomed room", poll(doomedRoom, doomedBuyer))
	loop("healthy room", poll(healthyRoom, healthyBuyer))
	loop("doomed bucket", holdAndRelease(doomedBuyer, seats[0]))
	loop("healthy bucket", holdAndRelease(healthyBuyer, seats[1]))
	waitFor(t, 30*time.Second, "requests before the kill", func() bool {
		return started("doomed room") >= 5 && started("doomed bucket") >= 5
	})

	healthyMasters := slices.DeleteFunc(c.Masters(t), func(m string) bool { return m == victim })
	// What failed on the healthy masters before the kill (a loaded machine's
	// call past its deadline) is not the failover's: count from here.
	before := healthyFailures(t, ts, healthyMasters)
	killed := time.Now()
	c.Kill(t, victim)
	c.WaitHealthy(t, 60*time.Second) // every live node: each slot has a live master
	promoted, atPromotion := time.Now(), client.SlotMapFetches()
	// The instance follows: it fetches the map twice more, and then each of
	// the doomed room's and bucket's loops starts five requests.
	followed := atPromotion + followFetches
	waitFor(t, 60*time.Second, "the slot map fetched twice after the promotion", func() bool {
		return client.SlotMapFetches() >= followed
	})
	after := func(name string) int {
		return samples.Count(name, func(s sample) bool { return s.fetches >= followed })
	}
	waitFor(t, 60*time.Second, "requests after the instance followed", func() bool {
		return after("doomed room") >= 5 && after("doomed bucket") >= 5
	})
	stop.Store(true)
	wg.Wait()

	var w failoverWindows
	w.promoted = c.MasterOf(t, roomKey(ts, doomedRoom))
	waitFor(t, 30*time.Second, "readyz saying redundancy is lost", func() bool {
		w.readyz = ts.request(t, "GET", "/readyz", "")
		return strings.Contains(string(w.readyz.raw), `"redis_redundancy":"lost"`)
	})
	w.promotedAfter = promoted.Sub(killed)
	window := func(name string) (afterKill, afterPromotion time.Duration, followed, late int) {
		last := time.Time{}
		for _, s := range samples.Of(name) {
			if !s.ok && s.at.After(killed) {
				last = s.at
			}
			if s.fetches >= atPromotion+followFetches {
				followed++
				if !s.ok {
					late++
				}
			}
		}
		if last.IsZero() {
			return 0, 0, followed, late
		}
		return last.Sub(killed), max(0, last.Sub(promoted)), followed, late
	}
	w.room503, w.roomAfterPromotion, w.followedRoom, w.lateRoom = window("doomed room")
	w.bucketOpen, w.bucketAfterPromo, w.followedBucket, w.lateBucket = window("doomed bucket")
	for _, name := range []string{"healthy room", "healthy bucket"} {
		for _, s := range samples.Of(name) {
			if !s.ok && !s.at.Before(killed) {
				w.healthyRoom503++
			}
		}
	}
	w.healthyFailed = healthyFailures(t, ts, healthyMasters) - before
	w.logs = logs.String()
	t.Logf("master %s killed; replica promoted after %v. The room on it failed until %v after the kill (%v after the promotion); "+
		"the bucket on it was decided without Redis until %v after the kill (%v after the promotion); "+
		"%d and %d of their requests after the instance followed failed. On healthy masters: %d failed requests, %d failed calls.",
		victim, w.promotedAfter.Round(10*time.Millisecond), w.room503.Round(10*time.Millisecond), w.roomAfterPromotion.Round(10*time.Millisecond),
		w.bucketOpen.Round(10*time.Millisecond), w.bucketAfterPromo.Round(10*time.Millisecond), w.lateRoom, w.lateBucket,
		w.healthyRoom503, w.healthyFailed)
	return w
}

// TestFailoverIsFollowedWithinSeconds kills the master that serves a waiting
// room and a buyer's bucket while both are in use. Once every live node says
// the replica is master, the instance follows within two fetches of its slot
// map (conn.SlotMapReload apart): every request on that room and bucket that
// starts after them is admitted and decided in Redis. Meanwhile the room and
// the bucket on healthy masters never fail (no 503, no call failed).
func TestFailoverIsFollowedWithinSeconds(t *testing.T) {
	t.Parallel()
	c := testenv.StartCluster(t)
	rdb, err := conn.Redis(context.Background(), c.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := failover(t, c, rdb.(*conn.ClusterClient))
	if w.lateRoom != 0 || w.lateBucket != 0 {
		t.Errorf("after the instance had fetched the slot map %d times since the promotion, %d of %d requests on the room and %d of %d on the bucket of the dead master still failed",
			followFetches, w.lateRoom, w.followedRoom, w.lateBucket, w.followedBucket)
	}
	if w.healthyRoom503 != 0 || w.healthyFailed != 0 {
		t.Errorf("on healthy masters %d requests and %d calls failed; want none. The instance's warnings:\n%s",
			w.healthyRoom503, w.healthyFailed, warnings(w.logs))
	}
	// The promoted replica has no replica of its own: readiness says so, and
	// stays ready.
	var ready struct {
		Status     string   `json:"status"`
		Redis      string   `json:"redis"`
		Redundancy string   `json:"redis_redundancy"`
		Lonely     []string `json:"redis_masters_without_replica"`
	}
	if err := json.Unmarshal(w.readyz.raw, &ready); err != nil {
		t.Fatal(err)
	}
	if w.readyz.StatusCode != 200 || ready.Status != "ready" || ready.Redis != "ok" || !slices.Equal(ready.Lonely, []string{w.promoted}) {
		t.Errorf("readyz after the takeover = %d %s; want 200, ready, redis ok, redundancy lost for %s alone", w.readyz.StatusCode, w.readyz.raw, w.promoted)
	}
	if !strings.Contains(w.logs, "redundancy lost") {
		t.Errorf("no WARN line said redundancy was lost:\n%s", warnings(w.logs))
	}
}

// warnings are the WARN lines of an instance's log.
func warnings(logs string) string {
	var out strings.Builder
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `"level":"WARN"`) {
			out.WriteString(line)
		}
	}
	return out.String()
}
