package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// Config says what Run does.
type Config struct {
	// Out is the directory the JSON and SVG files go to; it must exist.
	Out string
	// Quick runs the short versions (a few seconds in all).
	Quick bool
	// Experiments are the numbers (1–5) to run; empty runs all.
	Experiments []int
	// Stdout receives the tables.
	Stdout io.Writer
}

// Main is "stagedoor lab [-out DIR] [-quick] [-experiments 1,2,3,4,5]": the
// lab against the Redis of redisURL (REDIS_URL), under a key prefix of its own
// that it deletes when it ends, interrupted or not.
func Main(ctx context.Context, redisURL string, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(stdout)
	out := fs.String("out", "", "directory for the JSON and SVG files (default: a new temporary directory)")
	quick := fs.Bool("quick", false, "run the short versions of the experiments")
	which := fs.String("experiments", "1,2,3,4,5", "the experiments to run, comma-separated: 1 boundary, 2 speed, 3 memory, 4 atomicity, 5 global")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("lab: unexpected arguments %q", fs.Args())
	}
	exps, err := parseExperiments(*which)
	if err != nil {
		return err
	}
	if *out == "" {
		if *out, err = os.MkdirTemp("", "stagedoor-lab-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	newClient := func(ctx context.Context) (redis.UniversalClient, error) { return Client(ctx, redisURL, logger) }
	rdb, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer rdb.Close()
	env := Env{RDB: rdb, Prefix: "stagedoor-lab:" + randomHex(4) + ":", NewClient: newClient}
	return Run(ctx, env, Config{Out: *out, Quick: *quick, Experiments: exps, Stdout: stdout})
}

// Client is a Redis client for the lab: conn.Redis's (one server or a
// cluster, as REDIS_URL says), with the deadlines of a benchmark instead of a
// request path's. conn gives a read 200 ms because every caller of the program
// has a policy for a Redis that does not answer; the lab wants the answer, and
// loads the machine on purpose.
func Client(ctx context.Context, redisURL string, logger *slog.Logger) (redis.UniversalClient, error) {
	c, err := conn.Redis(ctx, redisURL, logger)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// Fresh options, not a copy: a client's options hold state of their own.
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		return redis.NewClient(&redis.Options{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB,
			TLSConfig: o.TLSConfig, DialTimeout: time.Second, ReadTimeout: labTimeout, WriteTimeout: labTimeout,
			ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 64}), nil
	case *conn.ClusterClient:
		o := c.Options()
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: o.Addrs, Username: o.Username, Password: o.Password,
			TLSConfig: o.TLSConfig, DialTimeout: time.Second, ReadTimeout: labTimeout, WriteTimeout: labTimeout,
			ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 64}), nil
	}
	return nil, fmt.Errorf("lab: unexpected Redis client %T", c)
}

// labTimeout is the lab's deadline of one read or write to Redis.
const labTimeout = 10 * time.Second

func parseExperiments(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 5 {
			return nil, fmt.Errorf("lab: -experiments: %q is not a number from 1 to 5", f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Run runs the experiments, prints their tables to cfg.Stdout, writes their
// JSON (and the boundary's SVG) to cfg.Out, and deletes every key it wrote
// under env.Prefix when it ends, even on an error or an interrupt.
func Run(ctx context.Context, env Env, cfg Config) (err error) {
	start := time.Now()
	w := cfg.Stdout
	if w == nil {
		w = io.Discard
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		n, cerr := Cleanup(cctx, env.RDB, env.Prefix)
		fmt.Fprintf(w, "\nCleaned up: deleted the %s keys left under %s at the end (each experiment deletes its own as it goes); done in %.1f s.\n", thousands(int64(n)), env.Prefix, time.Since(start).Seconds())
		err = errors.Join(err, cerr)
	}()
	if len(cfg.Experiments) == 0 {
		cfg.Experiments = []int{1, 2, 3, 4, 5}
	}
	mode := "full"
	if cfg.Quick {
		mode = "quick"
	}
	fmt.Fprintf(w, "Stagedoor's rate-limiting lab (%s run), after the lab of lesson 13, \"Rate Limiting & Backpressure\"\n", mode)
	fmt.Fprintf(w, "Redis %s, keys under %s; %s.\n", redisVersion(ctx, env.RDB), env.Prefix, versions())
	fmt.Fprintf(w, "This machine: %d CPUs%s.\n", runtime.NumCPU(), loadAverage())
	fmt.Fprintf(w, "Peers: %s. Files: %s\n", PeerNote, cfg.Out)

	algs := Algorithms()
	save := func(name string, v any, t *table) error {
		t.write(w)
		path, err := writeJSON(cfg.Out, name, v)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "→ %s\n", path)
		return nil
	}
	for _, n := range cfg.Experiments {
		began := time.Now()
		switch n {
		case 1:
			r, err := RunBoundary(ctx, env, algs, DefaultBoundary())
			if err != nil {
				return fmt.Errorf("boundary: %w", err)
			}
			if err := save("boundary.json", r, r.report()); err != nil {
				return err
			}
			svg := filepath.Join(cfg.Out, "boundary.svg")
			if err := os.WriteFile(svg, []byte(BoundarySVG(r)), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "→ %s\n", svg)
		case 2:
			sc := DefaultSpeed()
			if cfg.Quick {
				sc = QuickSpeed()
			}
			r, err := RunSpeed(ctx, env, algs, sc)
			if err != nil {
				return fmt.Errorf("speed: %w", err)
			}
			if err := save("speed.json", r, r.report()); err != nil {
				return err
			}
		case 3:
			mc := DefaultMemory()
			if cfg.Quick {
				mc = QuickMemory()
			}
			r, err := RunMemory(ctx, env, algs, mc)
			if err != nil {
				return fmt.Errorf("memory: %w", err)
			}
			if err := save("memory.json", r, r.report()); err != nil {
				return err
			}
		case 4:
			r, err := RunAtomicity(ctx, env, DefaultAtomicity())
			if err != nil {
				return fmt.Errorf("atomicity: %w", err)
			}
			if err := save("atomicity.json", r, r.report()); err != nil {
				return err
			}
		case 5:
			gc := DefaultGlobal()
			if cfg.Quick {
				gc = QuickGlobal()
			}
			var ga []Algorithm
			for _, id := range []string{"bucket", "stagedoor"} {
				if a, ok := AlgorithmByID(id); ok {
					ga = append(ga, a)
				}
			}
			r, err := RunGlobal(ctx, env, ga, gc)
			if err != nil {
				return fmt.Errorf("global: %w", err)
			}
			if err := save("global.json", r, r.report()); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "(experiment %d: %.1f s)\n", n, time.Since(began).Seconds())
		// Each experiment starts on a clean slate: the keys of the last one,
		// expiring meanwhile, would be counted in the memory experiment.
		if _, err := Cleanup(ctx, env.RDB, env.Prefix); err != nil {
			return err
		}
	}
	return nil
}

// Cleanup deletes every key under prefix, and what go-redis/redis_rate wrote
// for it (RedisRatePrefix + prefix), on every master, with SCAN and UNLINK one
// key at a time (a cluster node refuses a multi-key UNLINK across slots). It
// returns how many keys it deleted.
func Cleanup(ctx context.Context, rdb redis.UniversalClient, prefix string) (int, error) {
	var mu sync.Mutex
	total := 0
	err := conn.ForEachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		for _, pattern := range []string{prefix + "*", RedisRatePrefix + prefix + "*"} {
			var cursor uint64
			for {
				keys, next, err := c.Scan(ctx, cursor, escapeGlob(pattern), 1000).Result()
				if err != nil {
					return err
				}
				if len(keys) > 0 {
					pipe := c.Pipeline()
					for _, k := range keys {
						pipe.Unlink(ctx, k)
					}
					if _, err := pipe.Exec(ctx); err != nil {
						return err
					}
					mu.Lock()
					total += len(keys)
					mu.Unlock()
				}
				if cursor = next; cursor == 0 {
					break
				}
			}
		}
		return nil
	})
	return total, err
}

// escapeGlob escapes the glob characters of a pattern's prefix, keeping the
// final "*".
func escapeGlob(pattern string) string {
	body := strings.TrimSuffix(pattern, "*")
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(body) + "*"
}

func redisVersion(ctx context.Context, rdb redis.UniversalClient) string {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "(version unknown)"
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return "(version unknown)"
}

// versions names the Redis clients built in, from the binary's build information.
func versions() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "module versions unknown"
	}
	want := map[string]string{"github.com/redis/go-redis/v9": "go-redis", "github.com/go-redis/redis_rate/v10": "redis_rate",
		"github.com/ulule/limiter/v3": "ulule/limiter"}
	var parts []string
	for _, d := range bi.Deps {
		if name, ok := want[d.Path]; ok {
			parts = append(parts, name+" "+d.Version)
		}
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "module versions unknown"
	}
	return strings.Join(parts, ", ")
}

// loadAverage is ", load average 1.23 (one minute)" where /proc/loadavg
// tells it: the lab shares the machine with whatever else runs, and its
// figures move with that.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return ""
	}
	return ", load average " + f[0] + " (one minute) as the run starts"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
