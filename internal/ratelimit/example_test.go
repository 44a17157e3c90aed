package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// exampleRedis is the Redis the examples run against: the tests' own
// (STAGEDOOR_TEST_REDIS_URL, which make test sets), else a local one, as
// go-redis/redis_rate's examples do. Each example writes under a fresh prefix.
func exampleRedis() (*redis.Client, string) {
	url := os.Getenv("STAGEDOOR_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		panic(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return redis.NewClient(opts), "example:" + hex.EncodeToString(b) + ":"
}

// A buyer's eleventh hold within a minute is refused by hold-buyer (10/1m),
// and the organizer's bucket (200/1m) is not charged for the refused request.
func Example() {
	rdb, prefix := exampleRedis()
	defer rdb.Close()
	lim := ratelimit.New(rdb, ratelimit.Options{
		Prefix:  prefix,
		Timeout: time.Second,
		Limits: []ratelimit.Definition{
			{Name: "hold-buyer", Setting: ratelimit.Setting{Limit: ratelimit.PerMinute(10), Mode: ratelimit.Enforce}},
			{Name: "hold-organizer", Setting: ratelimit.Setting{Limit: ratelimit.PerMinute(200), Mode: ratelimit.Enforce}},
		},
	})
	ctx := context.Background()
	holdBy := func(buyer string) ratelimit.Decision {
		return lim.Allow(ctx,
			ratelimit.Check{Limit: "hold-buyer", Key: buyer},
			ratelimit.Check{Limit: "hold-organizer", Key: "77"})
	}
	hold := func() ratelimit.Decision { return holdBy("8812") }

	d := hold()
	buyer, _ := d.Tightest()
	fmt.Println("first:", d.Allowed, buyer.Limit, "remaining", buyer.Remaining, "full again in", buyer.ResetAfter.Round(time.Second))
	for range 9 {
		hold()
	}
	d = hold()
	fmt.Println("eleventh:", d.Allowed, d.Violated(), "retry in", d.RetryAfter.Round(time.Second))
	// Ten holds spent ten of the organizer's 200 tokens; the refused one none:
	// another buyer's hold leaves 189.
	organizer := holdBy("8813").Results[1]
	fmt.Println("organizer:", organizer.Remaining)
	// Output:
	// first: true hold-buyer remaining 9 full again in 6s
	// eleventh: false [hold-buyer] retry in 6s
	// organizer: 189
}

// A limit in shadow mode refuses nothing but says what it would have refused:
// the dark launch of a new limit. Off is the kill switch: not evaluated at all.
func ExampleLimiter_SetSetting() {
	rdb, prefix := exampleRedis()
	defer rdb.Close()
	lim := ratelimit.New(rdb, ratelimit.Options{
		Prefix:  prefix,
		Timeout: time.Second,
		Limits: []ratelimit.Definition{
			{Name: "scanner-key", Setting: ratelimit.Setting{Limit: ratelimit.PerSecond(1), Mode: ratelimit.Enforce}},
		},
	})
	ctx := context.Background()
	scan := func() ratelimit.Result {
		return lim.Allow(ctx, ratelimit.Check{Limit: "scanner-key", Key: "gate-1"}).Results[0]
	}
	scan()
	fmt.Println("enforce:", scan().Outcome)
	_ = lim.SetSetting("scanner-key", ratelimit.Setting{Limit: ratelimit.PerSecond(1), Mode: ratelimit.Shadow})
	r := scan()
	fmt.Println("shadow:", r.Outcome, "allowed", r.Allowed)
	_ = lim.SetSetting("scanner-key", ratelimit.Setting{Limit: ratelimit.PerSecond(1), Mode: ratelimit.Off})
	fmt.Println("off:", scan().Outcome)
	// Output:
	// enforce: denied
	// shadow: shadow_denied allowed true
	// off: off
}

// A limit is written rate/period, with an optional burst.
func ExampleParseLimit() {
	for _, spec := range []string{"10/1m", "20/1s burst 50"} {
		l, _ := ratelimit.ParseLimit(spec)
		fmt.Printf("%s: %d tokens, one back every %s\n", l, l.Burst, l.Period/time.Duration(l.Rate))
	}
	// Output:
	// 10/1m: 10 tokens, one back every 6s
	// 20/1s burst 50: 50 tokens, one back every 50ms
}
