package ratelimit

import (
	"context"
	"testing"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// counterRider counts its runs in its key and allows, or refuses when refuse.
func counterRider(key string, refuse bool) *Rider {
	verdict := "1"
	if refuse {
		verdict = "0"
	}
	return &Rider{Script: NewRiderScript(`
local n = redis.call('INCR', k)
redis.call('PEXPIRE', k, 60000)
return {tonumber(argv[1]), n, now}`), Key: key, Args: []any{verdict}}
}

// TestARiderRidesInTheBucketsScript: a rider runs in the one script of the
// request's buckets (one Redis call for both) and sees Redis's clock; when it
// refuses, no bucket is charged and the leased tokens go back to their lease;
// when a bucket refuses, it does not run.
func TestARiderRidesInTheBucketsScript(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	c := testenv.CountScripts(rdb)
	buyer := def(t, "buyer", "2/1m", Enforce, FailOpen)
	buyer.Tag = "b"
	lim, _ := newTestLimiter(c, Options{Prefix: prefix, Limits: []Definition{buyer, def(t, "org", "1000/1s", Enforce, FailOpen|Leased)}})
	ctx := context.Background()
	if k := lim.Key("buyer", "a"); k != prefix+"rl:{b:a}:buyer" {
		t.Fatalf("a tagged bucket's key = %q", k)
	}
	riderKey := prefix + "x:{b:a}"
	checks := []Check{{"buyer", "a"}, {"org", "o"}}
	// Redis learns the scripts (a first run is EVALSHA, then EVAL).
	lim.AllowWith(ctx, counterRider(prefix+"x:{b:warm}", false), Check{"buyer", "warm"}, Check{"org", "warm"})

	r := counterRider(riderKey, true)
	before := c.Calls()
	d := lim.AllowWith(ctx, r, checks...)
	if !r.Ran || r.Err != nil || len(r.Reply) != 3 || r.Reply[0] != 0 || r.Reply[1] != 1 || r.Reply[2] < 1e15 {
		t.Fatalf("refusing rider: ran %v, reply %v, err %v", r.Ran, r.Reply, r.Err)
	}
	if n := c.Calls() - before; n != 2 { // the lease of org's tokens, then the one script of buyer and the rider
		t.Fatalf("a request with a rider made %d Redis calls, want 2", n)
	}
	if d.Results[0].Outcome != OutcomeAllowed || d.Results[0].Remaining != 2 {
		t.Fatalf("buyer under a refusing rider: %+v, want allowed with its 2 tokens left (none spent)", d.Results[0])
	}
	if e := lim.limits["org"].cfg.Load().leases.keys["o"]; e.tokens != 20 {
		t.Fatalf("org's lease holds %d tokens after the rider refused, want 20 (its token given back)", e.tokens)
	}

	r = counterRider(riderKey, false)
	before = c.Calls()
	if d := lim.AllowWith(ctx, r, checks...); !d.Allowed || !r.Ran || r.Reply[1] != 2 || d.Results[0].Remaining != 1 {
		t.Fatalf("allowing rider: %+v, ran %v, reply %v", d, r.Ran, r.Reply)
	}
	if n := c.Calls() - before; n != 1 {
		t.Fatalf("a request on a lease with a rider made %d Redis calls, want 1", n)
	}
	lim.AllowWith(ctx, counterRider(riderKey, false), checks...) // buyer's last token
	r = counterRider(riderKey, false)
	if d := lim.AllowWith(ctx, r, checks...); d.Allowed || r.Ran || r.Err != nil {
		t.Fatalf("a request buyer refuses: %+v, rider ran %v (%v); want refused, the rider not run", d, r.Ran, r.Err)
	}
	if n, _ := rdb.Get(ctx, riderKey).Int(); n != 3 {
		t.Fatalf("the rider ran %d times, want 3", n)
	}

	// Every bucket off: the rider runs alone.
	off := def(t, "buyer", "2/1m", Off, FailOpen)
	offLim, _ := newTestLimiter(rdb, Options{Prefix: prefix, Limits: []Definition{off}})
	r = counterRider(riderKey, false)
	if d := offLim.AllowWith(ctx, r, Check{"buyer", "a"}); !d.Allowed || !r.Ran || r.Reply[1] != 4 {
		t.Fatalf("a rider with every bucket off: %+v, ran %v, reply %v", d, r.Ran, r.Reply)
	}
}

// TestARiderInAnotherSlotRidesAlone: split by slot, a rider whose key is in
// no bucket's slot runs alone after the buckets, and a refusal by it gives
// their tokens back.
func TestARiderInAnotherSlotRidesAlone(t *testing.T) {
	rdb, prefix := sharedRedis(t, 4)
	c := testenv.CountScripts(rdb)
	lim, _ := newTestLimiter(c, Options{Prefix: prefix, SplitBySlot: true,
		Limits: []Definition{def(t, "buyer", "2/1m", Enforce, FailOpen)}})
	ctx := context.Background()
	lim.AllowWith(ctx, counterRider(prefix+"x:{warm}", true), Check{"buyer", "warm"}) // Redis learns the scripts
	r := counterRider(prefix+"x:{elsewhere}", true)
	before := c.Calls()
	if d := lim.AllowWith(ctx, r, Check{"buyer", "a"}); !r.Ran || r.Reply[0] != 0 || d.Results[0].Remaining != 2 {
		t.Fatalf("a refusing rider alone: %+v, ran %v, reply %v; want buyer's token given back", d, r.Ran, r.Reply)
	}
	if n := c.Calls() - before; n != 3 { // the bucket, the rider, the refund
		t.Fatalf("%d Redis calls, want 3", n)
	}
}
