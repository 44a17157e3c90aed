package concurrency

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

const testBucket ratelimit.Name = "hold-buyer"

// newRiderPair is a buyer-concurrency limiter of Max 5 whose keys share the
// buyer's tag with a rate limiter's hold-buyer bucket of setting.
func newRiderPair(t *testing.T, setting ratelimit.Setting) (*Limiter, *ratelimit.Limiter, *redis.Client) {
	t.Helper()
	rdb, prefix := sharedRedis(t, 60)
	l, _ := newTestLimiter(rdb, Options{Max: 5, Prefix: prefix, Tag: "buyer"})
	rl := ratelimit.New(rdb, ratelimit.Options{Prefix: prefix, Timeout: 5 * time.Second, Registerer: prometheus.NewRegistry(),
		Limits: []ratelimit.Definition{{Name: testBucket, Setting: setting, Tag: "buyer"}}})
	return l, rl, rdb
}

// enter is one request of buyer 8812 through both, in one script.
func enter(ctx context.Context, l *Limiter, rl *ratelimit.Limiter) (ratelimit.Decision, Decision, func()) {
	rider, entered := l.Rider("8812")
	d := rl.AllowWith(ctx, rider, ratelimit.Check{Limit: testBucket, Key: "8812"})
	cd, release := entered()
	return d, cd, release
}

// enterAtOnce is n requests of buyer 8812 through both, released at once.
func enterAtOnce(ctx context.Context, l *Limiter, rl *ratelimit.Limiter, n int) ([]ratelimit.Decision, []Decision) {
	ds, cds := make([]ratelimit.Decision, n), make([]Decision, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			ds[i], cds[i], _ = enter(ctx, l, rl)
		})
	}
	close(start)
	wg.Wait()
	return ds, cds
}

// TestRiderRaceAdmitsExactlyMax: fifty requests of one buyer at once, each
// deciding its bucket and taking its lease in one script: exactly five get a
// lease, and the 45 refused by buyer-concurrency spend no token of the bucket.
func TestRiderRaceAdmitsExactlyMax(t *testing.T) {
	// 1000 an hour: a token comes back every 3.6 s, not within the test on a
	// loaded machine (at 1000 a minute, one came back every 60 ms).
	l, rl, _ := newRiderPair(t, ratelimit.Setting{Limit: ratelimit.PerHour(1000), Mode: ratelimit.Enforce})
	if k := l.Key("8812"); !strings.HasSuffix(k, "cc:{buyer:8812}:buyer-concurrency") {
		t.Fatalf("lease key %q does not carry the buyer's tag", k)
	}
	ctx := context.Background()
	const n = 50
	ds, cds := enterAtOnce(ctx, l, rl, n)
	allowed, denied := 0, 0
	for i := range n {
		if !ds[i].Allowed || ds[i].Results[0].Outcome != ratelimit.OutcomeAllowed {
			t.Fatalf("request %d: bucket decided %+v, want allowed", i, ds[i])
		}
		switch cds[i].Outcome {
		case OutcomeAllowed:
			allowed++
		case OutcomeDenied:
			denied++
		default:
			t.Errorf("request %d: %+v", i, cds[i])
		}
	}
	if allowed != 5 || denied != 45 || l.Leases() != 5 {
		t.Fatalf("allowed %d, denied %d, leases %d; want 5, 45 and 5", allowed, denied, l.Leases())
	}
	// 5 tokens spent of 1000: the next request sees 994 left, not 949.
	l2, _ := newTestLimiter(l.rdb, Options{Max: 5, Prefix: l.prefix, Tag: "buyer", Name: "other"})
	rider, _ := l2.Rider("8812")
	if d := rl.AllowWith(ctx, rider, ratelimit.Check{Limit: testBucket, Key: "8812"}); d.Results[0].Remaining != 994 {
		t.Fatalf("after 5 leases and 45 refusals: %d tokens left, want 994", d.Results[0].Remaining)
	}
}

// TestRiderRaceOneLastToken: ten requests at once for the bucket's last token:
// one passes and takes a lease; the nine refused by the bucket take none.
func TestRiderRaceOneLastToken(t *testing.T) {
	l, rl, rdb := newRiderPair(t, ratelimit.Setting{Limit: ratelimit.PerHour(1), Mode: ratelimit.Enforce})
	ctx := context.Background()
	const n = 10
	ds, cds := enterAtOnce(ctx, l, rl, n)
	passed := 0
	for i := range n {
		switch {
		case ds[i].Allowed && cds[i].Outcome == OutcomeAllowed:
			passed++
		case ds[i].Allowed:
			t.Errorf("request %d: allowed by the bucket, lease %+v", i, cds[i])
		case cds[i].Outcome != "" || cds[i].InFlight != 0:
			t.Errorf("request %d: refused by the bucket but the lease decided %+v", i, cds[i])
		}
	}
	if leases := len(members(t, rdb, l.Key("8812"))); passed != 1 || l.Leases() != 1 || leases != 1 {
		t.Fatalf("%d passed, %d leases here, %d in Redis; want 1", passed, l.Leases(), leases)
	}
}
