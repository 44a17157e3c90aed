package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// queryCounter counts the statements a pool sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countedPool is a pool on the test's own database whose statements are counted.
func countedPool(t *testing.T) (*pgxpool.Pool, *queryCounter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &queryCounter{}
	cfg.ConnConfig.Tracer = counter
	db, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, counter
}

// redisCalls sums stagedoor_redis_calls_total over every caller, node and result.
func redisCalls(t *testing.T, ts *testServer) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(metricsText(t, ts), "\n") {
		if strings.HasPrefix(line, "stagedoor_redis_calls_total{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			n += int(v)
		}
	}
	return n
}

// TestARefusalCostsNoQueryAndNoRedisCall: once a buyer is refused by
// hold-buyer, each further hold of theirs is refused with no PostgreSQL
// statement and no Redis call: the session comes from the credential cache,
// the event from its cache, the refusal from the denial cache.
func TestARefusalCostsNoQueryAndNoRedisCall(t *testing.T) {
	t.Parallel()
	db, counter := countedPool(t)
	ts := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "1/1m"), db, nil)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 5))
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...); a.StatusCode != 201 {
		t.Fatalf("first hold = %d %s", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), buyer.bearer()...); a.StatusCode != 429 {
		t.Fatalf("second hold = %d %s", a.StatusCode, a.raw)
	}
	// The instance's own background work (the limit settings re-read each
	// second) uses the pool too, and a session is looked up again once a
	// second: a few tries find a window without either, even on a busy machine.
	var queries, calls int64
	// Short tries (ten requests, a fraction of a second even under the race
	// detector on a busy machine), so that many fall between those queries.
	for try := 0; try < 30; try++ {
		// The statements are counted right around the requests: a scrape
		// (redisCalls) may wait a quarter of a second for its gathering.
		c0 := redisCalls(t, ts)
		q0 := counter.n.Load()
		for range 10 {
			if a := ts.inProcess(t, "POST", "/v1/holds", holdBody(event, seats[1]), buyer.bearer()...); a.StatusCode != 429 {
				t.Fatalf("a refused hold = %d %s", a.StatusCode, a.raw)
			}
		}
		queries = counter.n.Load() - q0
		calls = int64(redisCalls(t, ts) - c0)
		if queries == 0 && calls == 0 {
			break
		}
	}
	if queries != 0 || calls != 0 {
		t.Errorf("10 refused holds sent %d PostgreSQL statements and made %d Redis calls in every one of 30 tries, want none", queries, calls)
	}
}

// TestRefusalsAreLoggedAsAFewLines: twenty holds refused by hold-buyer make
// one "refused" line at once, naming the limit, not a line each (the next
// lines, with counts, come at most every 10 s: internal/tally's tests).
func TestRefusalsAreLoggedAsAFewLines(t *testing.T) {
	t.Parallel()
	logs := &testenv.LogBuffer{}
	ts := startInstance(t, instance{env: limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "1/1m"), logs: logs})
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 5))
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), buyer.bearer()...); a.StatusCode != 201 {
		t.Fatalf("first hold = %d %s", a.StatusCode, a.raw)
	}
	for range 20 {
		if a := ts.inProcess(t, "POST", "/v1/holds", holdBody(event, seats[1]), buyer.bearer()...); a.StatusCode != 429 {
			t.Fatalf("a refused hold = %d %s", a.StatusCode, a.raw)
		}
	}
	var refused []map[string]any
	for _, line := range logs.Lines(t) {
		if line["msg"] == "refused" {
			refused = append(refused, line)
		}
		if line["msg"] == "request" && line["status"] == 429.0 && line["level"] != "DEBUG" {
			t.Errorf("a refusal has a request line at %v", line["level"])
		}
	}
	if len(refused) != 1 || refused[0]["limit"] != "hold-buyer" || refused[0]["count"] != 1.0 || refused[0]["level"] != "INFO" {
		t.Errorf("the refusals' lines: %v, want one INFO line of hold-buyer's first", refused)
	}
}
