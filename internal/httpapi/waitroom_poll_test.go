package httpapi_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/queuetoken"
	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// monitor counts the commands clients send a Redis (MONITOR), those a
// script runs inside it left out: what an instance costs it in calls.
type monitor struct {
	rdb   redis.UniversalClient
	mu    sync.Mutex
	cond  *sync.Cond
	lines []string // the commands seen, as MONITOR writes them
	marks int
}

func startMonitor(t *testing.T, addr string, rdb redis.UniversalClient) *monitor {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(ok, "+OK") {
		t.Fatalf("MONITOR = %q, %v", ok, err)
	}
	m := &monitor{rdb: rdb}
	m.cond = sync.NewCond(&m.mu)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			m.mu.Lock()
			switch {
			case strings.Contains(line, `"echo" "monitor-mark"`):
				m.marks++
				m.cond.Broadcast()
			case !strings.Contains(line, " lua] "):
				m.lines = append(m.lines, strings.TrimSpace(line))
			}
			m.mu.Unlock()
		}
	}()
	return m
}

// commands returns the commands seen since the last call, once the monitor
// has seen every command sent before it (a mark it sends itself).
func (m *monitor) commands(t *testing.T) []string {
	t.Helper()
	m.mu.Lock()
	want := m.marks + 1
	m.mu.Unlock()
	if err := m.rdb.Echo(context.Background(), "monitor-mark").Err(); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.marks < want {
		m.cond.Wait()
	}
	seen := m.lines
	m.lines = nil
	return seen
}

// TestPollsCostTheRoomNoRedis: 50 buyers join before the sale opens, then
// poll 1,000 times in all once it has (20 each: a buyer of a stadium's room
// waits minutes, polling every 1 to 10 s), each sending back the token of her
// last answer, 50 polls every 100 ms of the instance's clock (500 polls a
// second: a stadium instance gets about 3,400), on a redis-server of the
// test's own: fewer than 0.1 Redis commands a poll, counting every command
// the instance sent (MONITOR). That holds however the first polls after the
// draw are batched (at worst one call each: 50, with 21 progress reads).
// Without tokens each poll costs at least one.
func TestPollsCostTheRoomNoRedis(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb := redisClient(t, private.URL)
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	logs := &testenv.LogBuffer{}
	ts := startInstance(t, instance{rdb: rdb, roomClock: now, logs: logs})
	t.Cleanup(func() {
		if t.Failed() {
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
					t.Log(line)
				}
			}
		}
	})
	org := newAccount(t, ts, auth.Organizer)
	const n, rounds, workers = 50, 20, 25
	buyers := make([]testAccount, n)
	for i := range buyers {
		buyers[i] = newAccount(t, ts, auth.Buyer)
	}
	// Every buyer joins before the sale opens: when a loaded machine takes
	// longer than the lead, the sale is made again (a new event, a new room)
	// with twice the lead.
	var onSale time.Time
	var event string
	tokens := make([]string, n)
	for lead := 4 * time.Second; ; lead *= 2 {
		onSale = time.Now().Add(lead)
		event, _ = newEvent(t, ts, org, roomEventBody(1, 10, 2, onSale))
		late := -1
		for i, b := range buyers {
			a := ts.request(t, "POST", queuePath(event), "", b.bearer()...)
			q := as[queueJSON](t, a)
			if a.StatusCode == 200 && q.Status == "admitted" && lead < 30*time.Second {
				late = i // the sale opened meanwhile
				break
			}
			if a.StatusCode != 200 || q.Status != "waiting" || q.QueueToken == "" {
				t.Fatalf("join %d = %d %s; want waiting, with a token", i, a.StatusCode, a.raw)
			}
			tokens[i] = q.QueueToken
		}
		if late < 0 && testenv.RedisNow(t, rdb).Before(onSale) {
			break
		}
		if late < 0 {
			late = n - 1 // all waiting, but the last ones behind an open sale
		}
		t.Logf("the joins outlasted a sale %s away (%d made): again, with %s", lead, late+1, 2*lead)
	}
	testenv.SleepUntilRedis(t, rdb, onSale)

	mon := startMonitor(t, private.Addr, rdb)
	began := time.Now()
	var admitted int
	var answers sync.Mutex
	poll := func(i int, b testAccount) {
		a := ts.request(t, "GET", queuePath(event), "", append(b.bearer(), "Queue-Token", tokens[i])...)
		if a.StatusCode != 200 {
			t.Errorf("poll of buyer %d = %d %s", i, a.StatusCode, a.raw)
			return
		}
		q := as[queueJSON](t, a)
		if q.QueueToken == "" || q.Status == "waiting" && (q.Position == nil || *q.Position < 1) ||
			q.Status == "admitted" && !q.AdmittedUntil.After(time.Now()) {
			t.Errorf("poll of buyer %d = %d %s", i, a.StatusCode, a.raw)
		}
		answers.Lock()
		defer answers.Unlock()
		tokens[i] = q.QueueToken
		if q.Status == "admitted" {
			admitted++
		}
	}
	for range rounds {
		mu.Lock()
		clock = clock.Add(waitroom.ProgressMaxAge)
		mu.Unlock()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					poll(i, buyers[i])
				}
			})
		}
		wg.Wait()
	}
	seen := mon.commands(t)
	perPoll := float64(len(seen)) / (n * rounds)
	t.Logf("%d polls with their tokens in %s: %d Redis commands, %.3f a poll (%d answers admitted)",
		n*rounds, time.Since(began).Round(time.Millisecond), len(seen), perPoll, admitted)
	if perPoll >= 0.1 {
		t.Errorf("%.3f Redis commands a poll with a token, want fewer than 0.1: %q", perPoll, seen)
	}
	if admitted == 0 {
		t.Error("no poll answered admitted: the room admits 2 a second")
	}

	for _, b := range buyers {
		if a := ts.request(t, "GET", queuePath(event), "", b.bearer()...); a.StatusCode != 200 {
			t.Fatalf("poll without a token = %d %s", a.StatusCode, a.raw)
		}
	}
	without := float64(len(mon.commands(t))) / n
	t.Logf("%d polls without a token, one after another: %.3f Redis commands a poll", n, without)
	if without < 1 {
		t.Errorf("%.3f Redis commands a poll without a token; each should ask the room", without)
	}
}

// TestQueueTokensRefused: a token altered in its claims or its signature,
// another buyer's, another event's, one expired and one that is no token are
// refused with 400 invalid-queue-token, reading nothing; the buyer's own
// token is good on another instance, and a poll without one still answers.
func TestQueueTokensRefused(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	db := testenv.Postgres(t)
	one := startInstance(t, instance{db: db, rdb: rdb, redisPrefix: prefix})
	two := startInstance(t, instance{db: db, rdb: rdb, redisPrefix: prefix})
	org, cy := newAccount(t, one, auth.Organizer), newAccount(t, one, auth.Buyer)
	ada, bob := newAccount(t, one, auth.Buyer), newAccount(t, one, auth.Buyer)
	// Not on sale for an hour: Cy, Ada and Bob wait in its lottery.
	event, _ := newEvent(t, one, org, roomEventBody(1, 2, 1, time.Now().Add(time.Hour)))
	other, _ := newEvent(t, one, org, roomEventBody(1, 2, 1, time.Now().Add(time.Hour)))
	join := func(who testAccount, ev string) queueJSON {
		a := one.request(t, "POST", queuePath(ev), "", who.bearer()...)
		if a.StatusCode != 200 {
			t.Fatalf("join = %d %s", a.StatusCode, a.raw)
		}
		return as[queueJSON](t, a)
	}
	join(cy, event)
	mine, bobs, elsewhere := join(ada, event), join(bob, event), join(ada, other)

	a := two.request(t, "GET", queuePath(event), "", append(ada.bearer(), "Queue-Token", mine.QueueToken)...)
	if q := as[queueJSON](t, a); a.StatusCode != 200 || q.Status != "waiting" || *q.Position < 1 || *q.Position > 3 || q.QueueToken == "" {
		t.Fatalf("her token on another instance = %d %s, want her place in the lottery of 3", a.StatusCode, a.raw)
	}
	payload, sig, _ := strings.Cut(mine.QueueToken, ".")
	swap := func(s string, i int) string {
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	expired, err := queuetoken.New(db, time.Minute, func() time.Time { return time.Now().Add(-2 * time.Minute) }).
		Sign(context.Background(), waitroom.Place{EventID: event, BuyerID: ada.id, Rank: 1}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for what, token := range map[string]string{
		"altered in its claims":    swap(payload, len(payload)/2) + "." + sig,
		"altered in its signature": payload + "." + swap(sig, 5),
		"another buyer's":          bobs.QueueToken,
		"another event's":          elsewhere.QueueToken,
		"expired":                  expired,
		"no token":                 "not-a-token",
		"forged":                   payload + "." + strings.Repeat("A", len(sig)),
	} {
		a := one.request(t, "GET", queuePath(event), "", append(ada.bearer(), "Queue-Token", token)...)
		if a.StatusCode != 400 || !a.problem(t).is("invalid-queue-token") {
			t.Errorf("a token %s = %d %s, want 400 invalid-queue-token", what, a.StatusCode, a.raw)
		}
	}
	if a := one.request(t, "GET", queuePath(event), "", ada.bearer()...); a.StatusCode != 200 {
		t.Errorf("a poll without a token = %d %s", a.StatusCode, a.raw)
	}
}
