package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// AtomicityConfig is experiment 4: Users users each make one request, and the
// process "dies" on every CrashEvery-th new counter, right after its first
// command; then the keys left without a time to live are counted.
type AtomicityConfig struct {
	Users, CrashEvery int
	// TTL is the time to live each counter should get (the lab: 60 s).
	TTL time.Duration
}

// DefaultAtomicity is the lab's: 200 users, a crash every 10th.
func DefaultAtomicity() AtomicityConfig {
	return AtomicityConfig{Users: LabAtomicityUsers, CrashEvery: LabAtomicityCrashEvery, TTL: time.Minute}
}

// AtomicityRow is one way of writing the limiter.
type AtomicityRow struct {
	Mode       string `json:"mode"`
	Keys       int    `json:"key_count"`
	WithoutTTL int    `json:"keys_without_ttl"`
	Crashes    int    `json:"crashes"`
	Lab        int    `json:"lab"`
}

// AtomicityResult is experiment 4's outcome.
type AtomicityResult struct {
	Users      int            `json:"users"`
	CrashEvery int            `json:"crash_every"`
	Rows       []AtomicityRow `json:"report"`
}

// RunAtomicity runs experiment 4: INCR then EXPIRE as two commands, the lab's
// fixed window script, and ulule/limiter's store (INCRBY and PEXPIRE in one
// script). The crash comes at the same point of the caller's code in each:
// after the first call to Redis, before anything else. Between two commands
// that is between INCR and EXPIRE; a script has no such point.
func RunAtomicity(ctx context.Context, env Env, cfg AtomicityConfig) (*AtomicityResult, error) {
	res := &AtomicityResult{Users: cfg.Users, CrashEvery: cfg.CrashEvery}
	type mode struct {
		name string
		lab  int
		make func(prefix string, crash func() bool) (Limiter, error)
	}
	lim := Limit{N: 100, Window: cfg.TTL}
	modes := []mode{
		{name: "two commands (INCR, then EXPIRE)", lab: LabNoTTLTwoCommands, make: func(p string, crash func() bool) (Limiter, error) {
			return &twoCommands{rdb: env.RDB, prefix: p, limit: int64(lim.N), ttl: cfg.TTL, crash: crash}, nil
		}},
		{name: "one script (the lab's fixed window)", lab: LabNoTTLScript, make: func(p string, _ func() bool) (Limiter, error) {
			return scriptNew(fixedWindowScript)(env.RDB, p, lim)
		}},
	}
	if a, ok := AlgorithmByID("ulule"); ok {
		modes = append(modes, mode{name: "ulule/limiter store (one script)", lab: -1, make: func(p string, _ func() bool) (Limiter, error) {
			return a.New(env.RDB, p, lim)
		}})
	}
	// The fixed window's counters expire at the next boundary of Redis's clock:
	// one crossed during the run would make them vanish before they are
	// counted. A run takes well under a second, so it starts at least
	// atomicityMargin before a boundary.
	if err := awayFromBoundary(ctx, env, cfg.TTL); err != nil {
		return nil, err
	}
	for i, m := range modes {
		prefix := env.Prefix + "atomicity:" + strconv.Itoa(i) + ":"
		newCounters := 0
		crash := func() bool { newCounters++; return newCounters%cfg.CrashEvery == 0 }
		l, err := m.make(prefix, crash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		row := AtomicityRow{Mode: m.name, Lab: m.lab}
		for u := range cfg.Users {
			_, err := l.Allow(ctx, "u"+strconv.Itoa(u))
			switch {
			case errors.Is(err, errCrashed):
				row.Crashes++ // the process is gone; a new one serves the next user
			case err != nil:
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
		}
		// The ulule store writes its prefix + ":" + key.
		keyOf := func(u int) string { return prefix + "u" + strconv.Itoa(u) }
		if i == 2 {
			keyOf = func(u int) string { return prefix + "ulule:u" + strconv.Itoa(u) }
		}
		row.Keys, row.WithoutTTL, err = countWithoutTTL(ctx, env.RDB, cfg.Users, keyOf)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// atomicityMargin is the least time left before a window boundary for
// experiment 4 to start.
const atomicityMargin = 10 * time.Second

// awayFromBoundary returns when Redis's clock is at least atomicityMargin
// before the next boundary of window (waiting for the boundary to pass if it
// is nearer).
func awayFromBoundary(ctx context.Context, env Env, window time.Duration) error {
	clk, err := newRedisClock(ctx, env)
	if err != nil {
		return err
	}
	now := clk.now()
	if left := now.Truncate(window).Add(window).Sub(now); left < atomicityMargin && window > 2*atomicityMargin {
		clk.boundary = now
		return clk.sleepUntil(ctx, left+50*time.Millisecond)
	}
	return ctx.Err()
}

// countWithoutTTL asks the TTL of each user's key: how many exist, and how
// many of those never expire.
func countWithoutTTL(ctx context.Context, rdb redis.UniversalClient, users int, keyOf func(int) string) (keys, without int, err error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.DurationCmd, users)
	for u := range users {
		cmds[u] = pipe.PTTL(ctx, keyOf(u))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	for _, c := range cmds {
		switch d := c.Val(); {
		case d == -2: // go-redis's -2: no such key
		case d == -1: // -1: the key exists and has no time to live
			keys++
			without++
		default:
			keys++
		}
	}
	return keys, without, nil
}

// report is experiment 4's table.
func (r *AtomicityResult) report() *table {
	t := &table{title: fmt.Sprintf("4. Atomicity: %d users, the process dies after its first command on every %dth new counter",
		r.Users, r.CrashEvery),
		header: []string{"limiter written as", "keys", "crashes", "keys without TTL", "lab", "consequence"}}
	for _, row := range r.Rows {
		consequence := "no keys stuck"
		if row.WithoutTTL > 0 {
			consequence = fmt.Sprintf("%d users refused FOREVER", row.WithoutTTL)
		}
		t.add(row.Mode, fmt.Sprint(row.Keys), fmt.Sprint(row.Crashes), fmt.Sprint(row.WithoutTTL), labInt(row.Lab), consequence)
	}
	t.note("Two commands leave a gap: a deploy, an OOM kill or a reaped container between INCR and EXPIRE leaves a counter that never expires, and once it passes the limit its user is refused until someone deletes the key. Here, as in the lab, 1 death in 10 new counters leaves 1 key in 10 without a TTL.")
	t.note("A script runs whole or not at all: the crash can only come before or after it, so every counter has its TTL. ulule/limiter's Redis store does the same (INCRBY and PEXPIRE in one script).")
	t.note("The crash is simulated, as in the lab: the caller stops after its first call and sends nothing more.")
	return t
}
