package lab

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// MemoryConfig is experiment 3: Redis's used_memory before and after bringing
// many users to their limit, per user, one algorithm at a time.
type MemoryConfig struct {
	Runs []MemoryRun
	// Goroutines call the algorithms that cannot be pipelined.
	Goroutines int
}

// MemoryRun is one limit and how many users are brought to it: Users for the
// lab's scripts, which are filled through a pipeline; LogUsers for the log,
// whose entries are costly to build; OneByOne for the limiters that can only
// be called one decision at a time (Stagedoor's and the libraries).
type MemoryRun struct {
	Limit    int `json:"limit"`
	Users    int `json:"users"`
	LogUsers int `json:"log_users"`
	OneByOne int `json:"one_by_one_users"`
}

// DefaultMemory is the full experiment: 100,000 users at limit 100, and
// 20,000 at limit 10,000. Some get fewer, to keep the whole lab within two
// minutes on two busy cores: building one user's log of 100 entries costs
// Redis about 0.3 ms (each ZADD into the compact encoding scans it), so the
// log gets 5,000 users at 100 (and 20 at 10,000, about 1.3 MB each); the
// limiters called one decision at a time get 20,000. The figure is per user,
// and these counts keep its noise to a few bytes.
func DefaultMemory() MemoryConfig {
	return MemoryConfig{Goroutines: 50, Runs: []MemoryRun{
		{Limit: 100, Users: 100000, LogUsers: 5000, OneByOne: 20000},
		{Limit: 10000, Users: 20000, LogUsers: 20, OneByOne: 20000},
	}}
}

// QuickMemory is a short version of DefaultMemory.
func QuickMemory() MemoryConfig {
	return MemoryConfig{Goroutines: 20, Runs: []MemoryRun{
		{Limit: 100, Users: 5000, LogUsers: 2000, OneByOne: 2000},
		{Limit: 10000, Users: 1000, LogUsers: 10, OneByOne: 1000},
	}}
}

// MemoryRow is one algorithm at one limit.
type MemoryRow struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Limit        int     `json:"limit"`
	Users        int     `json:"users"`
	Before       int64   `json:"used_memory_before"`
	After        int64   `json:"used_memory_after"`
	BytesPerUser float64 `json:"bytes_per_user"`
	// KeyUsage is MEMORY USAGE (SAMPLES 0) averaged over up to 100 of the
	// run's keys: the key and its value alone, exact, whatever else Redis did
	// meanwhile. The ulule and redis_rate keys carry a longer name.
	KeyUsage float64 `json:"memory_usage_per_key"`
	// Filled is the users whose filling call was allowed: all of them, or the
	// figure is not the state at the limit.
	Filled int `json:"filled"`
	// Keys is how many of the users' keys were still there once measured: all
	// of them, or some expired and the figure is low.
	Keys   int    `json:"keys"`
	Method string `json:"method"`
	// FillSeconds is how long filling took; Seconds the whole row, settling included.
	FillSeconds float64 `json:"fill_seconds"`
	Seconds     float64 `json:"seconds"`
	Error       string  `json:"error,omitempty"`
}

// MemoryResult is experiment 3's outcome.
type MemoryResult struct {
	Runs []MemoryRun `json:"runs"`
	Rows []MemoryRow `json:"rows"`
}

// Row returns the row of id at limit.
func (r *MemoryResult) Row(id string, limit int) (MemoryRow, bool) {
	for _, row := range r.Rows {
		if row.ID == id && row.Limit == limit {
			return row, true
		}
	}
	return MemoryRow{}, false
}

// memoryWindow is the window of the memory experiment's limits: a day, so
// that no key expires while it is measured (Stagedoor's key, after one
// request, lives until its bucket is full again, plus a second).
const memoryWindow = 24 * time.Hour

// RunMemory runs experiment 3. Each algorithm's keys are deleted before the
// next is measured, and their freeing awaited.
func RunMemory(ctx context.Context, env Env, algs []Algorithm, cfg MemoryConfig) (*MemoryResult, error) {
	res := &MemoryResult{Runs: cfg.Runs}
	for _, run := range cfg.Runs {
		for _, a := range algs {
			prefix := env.Prefix + a.ID + ":mem" + strconv.Itoa(run.Limit) + ":"
			lim, err := a.New(env.RDB, prefix, Limit{N: run.Limit, Window: memoryWindow})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.Name, err)
			}
			users := run.Users
			if _, ok := lim.(Piper); !ok {
				users = run.OneByOne
			}
			if a.ID == "log" {
				users = run.LogUsers
			}
			rowStart := time.Now()
			row := MemoryRow{ID: a.ID, Name: a.Name, Limit: run.Limit, Users: users}
			// One request first, on a key of its own, before the baseline: the
			// library's scripts are loaded and the connections open.
			if _, err := lim.Allow(ctx, "warm-up"); err != nil {
				return nil, fmt.Errorf("%s: %w", a.Name, err)
			}
			if err := settle(ctx, env.RDB); err != nil {
				return nil, err
			}
			if row.Before, err = usedMemory(ctx, env.RDB); err != nil {
				return nil, err
			}
			began := time.Now()
			row.Filled, row.Method, err = fill(ctx, env.RDB, lim, users, run.Limit, cfg.Goroutines)
			row.FillSeconds = time.Since(began).Seconds()
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				row.Error = err.Error()
			}
			time.Sleep(100 * time.Millisecond) // let an incremental rehash of the key space finish
			if row.After, err = usedMemory(ctx, env.RDB); err != nil {
				return nil, err
			}
			row.BytesPerUser = float64(row.After-row.Before) / float64(users)
			if row.KeyUsage, err = sampleUsage(ctx, env.RDB, prefix, 100); err != nil {
				return nil, err
			}
			n, err := Cleanup(ctx, env.RDB, prefix)
			if err != nil {
				return nil, err
			}
			row.Keys = n - 1 // the warm-up's key is in the baseline
			row.Seconds = time.Since(rowStart).Seconds()
			res.Rows = append(res.Rows, row)
		}
	}
	return res, settle(ctx, env.RDB)
}

// fill brings users keys of lim to n requests each: pipelined for the lab's
// scripts, n at once for a Charger, else one request (GCRA's state is one
// number however many requests it has seen). It returns how many were allowed.
func fill(ctx context.Context, rdb redis.UniversalClient, lim Limiter, users, n, goroutines int) (int, string, error) {
	key := func(i int) string { return "u" + strconv.Itoa(i) }
	if p, ok := lim.(Piper); ok {
		if err := p.Prepare(ctx); err != nil {
			return 0, "", err
		}
		// About 5,000 requests a pipeline, so that each answers well within
		// the client's read timeout.
		batch := max(1, min(1000, 5000/n))
		filled := 0
		for start := 0; start < users; start += batch {
			pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			pipe := rdb.Pipeline()
			for i := start; i < min(users, start+batch); i++ {
				p.Queue(pctx, pipe, key(i), n)
			}
			cmds, err := pipe.Exec(pctx)
			cancel()
			if err != nil {
				return filled, "", err
			}
			for _, c := range cmds {
				if r, err := c.(*redis.Cmd).Int64Slice(); err == nil && len(r) > 0 && r[0] == 1 {
					filled++
				}
			}
		}
		return filled, fmt.Sprintf("pipelined script, cost %d", n), nil
	}
	call, method := lim.Allow, "one request a user (the state is one number)"
	if c, ok := lim.(Charger); ok {
		call = func(ctx context.Context, k string) (bool, error) { return c.AllowN(ctx, k, n) }
		method = fmt.Sprintf("one request of cost %d a user", n)
	}
	var next, filled atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= users {
					return
				}
				ok, err := call(ctx, key(i))
				if err != nil {
					once.Do(func() { firstErr = err })
					continue
				}
				if ok {
					filled.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return int(filled.Load()), method, err
	}
	return int(filled.Load()), method, firstErr
}

// report is experiment 3's table.
func (r *MemoryResult) report() *table {
	header := []string{"algorithm"}
	for _, run := range r.Runs {
		header = append(header, fmt.Sprintf("B/user at %s", thousands(int64(run.Limit))), "users", "MEMORY USAGE")
	}
	t := &table{title: "3. Memory: used_memory after bringing each user to the limit, minus before, per user",
		header: append(header, "lab at 100")}
	var ids []string
	names := map[string]string{}
	for _, row := range r.Rows {
		if _, ok := names[row.ID]; !ok {
			ids = append(ids, row.ID)
			names[row.ID] = row.Name
		}
	}
	for _, id := range ids {
		cells := []string{names[id]}
		for _, run := range r.Runs {
			row, ok := r.Row(id, run.Limit)
			switch {
			case !ok:
				cells = append(cells, "—", "—", "—")
			case row.Error != "" || row.Filled != row.Users || row.Keys != row.Users:
				cells = append(cells, fixed(row.BytesPerUser, 0)+"*", thousands(int64(row.Users)), thousands(int64(row.KeyUsage+0.5)))
			default:
				cells = append(cells, thousands(int64(row.BytesPerUser+0.5)), thousands(int64(row.Users)), thousands(int64(row.KeyUsage+0.5)))
			}
		}
		lab := "—"
		switch id {
		case "log":
			lab = thousands(LabMemoryLog)
		case "fixed", "counter", "bucket":
			lab = fmt.Sprintf("%d–%d", LabMemoryOthersMin, LabMemoryOthersMax)
		}
		t.add(append(cells, lab)...)
	}
	for _, row := range r.Rows {
		if row.Error != "" || row.Filled != row.Users || row.Keys != row.Users {
			t.note("* %s at %d: %d of %d users filled, %d keys left to measure %s", row.Name, row.Limit, row.Filled, row.Users, row.Keys, row.Error)
		}
	}
	if len(r.Runs) >= 2 {
		lo, hi := r.Runs[0].Limit, r.Runs[len(r.Runs)-1].Limit
		a, okA := r.Row("log", lo)
		b, okB := r.Row("log", hi)
		if okA && okB && a.BytesPerUser > 0 {
			t.note("The log keeps every admission of the window: at %d a compact listpack of %d entries (lab %s B, here %s: each entry here is a 16-digit µs member and a 13-digit ms score, about 20 B; the lab did not publish its format); past 128 entries (zset-max-listpack-entries) Redis makes it a skiplist with a hash table, so at %s it costs %s B a user, %.0f× the %d's for %d× the limit.",
				lo, lo, thousands(LabMemoryLog), thousands(int64(a.BytesPerUser+0.5)), thousands(int64(hi)), thousands(int64(b.BytesPerUser+0.5)), b.BytesPerUser/a.BytesPerUser, lo, hi/lo)
		}
	}
	t.note("The others keep a counter, two counts or one number whatever the limit, so both columns match (lab: 121–171 B). Per user, used_memory counts more than MEMORY USAGE: the key's entries in the key space's and the expiries' hash tables, which double as keys arrive (so ±20 B a user from run to run).")
	t.note("Each user is brought to its limit (a log of N entries, a counter at N, an empty bucket) under a limit of N a day, so that nothing expires while measured; GCRA keeps one number whatever it has seen, so Stagedoor's limiter gets one request a user. MEMORY USAGE is one key and its value alone, exact, sampled over 100 keys.")
	t.note("Keys here carry the run's own prefix (stagedoor-lab:<id>:<algorithm>:mem<limit>:), longer than the lab's, which adds to every row alike. The Redis is shared, so there is no FLUSH: deltas, with whatever else wrote to it meanwhile counted in.")
	return t
}
