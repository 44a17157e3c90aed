package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Env is where the lab runs.
type Env struct {
	// RDB is the Redis every experiment uses.
	RDB redis.UniversalClient
	// Prefix is put before every key the lab writes, such as "stagedoor-lab:1a2b3c4d:".
	// Cleanup deletes everything under it.
	Prefix string
	// NewClient makes a separate client of the same Redis, for the replicas of
	// the global experiment; nil shares RDB.
	NewClient func(ctx context.Context) (redis.UniversalClient, error)
}

// clients returns n clients, each of its own when NewClient is set (else RDB,
// shared), and a function that closes those it made.
func (e Env) clients(ctx context.Context, n int) ([]redis.UniversalClient, func(), error) {
	out := make([]redis.UniversalClient, n)
	var made []redis.UniversalClient
	closeAll := func() {
		for _, c := range made {
			c.Close()
		}
	}
	for i := range out {
		out[i] = e.RDB
		if e.NewClient == nil {
			continue
		}
		c, err := e.NewClient(ctx)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		made = append(made, c)
		out[i] = c
	}
	return out, closeAll, nil
}

// Limit is n requests per window.
type Limit struct {
	N      int
	Window time.Duration
}

// String writes the limit such as "100/1s".
func (l Limit) String() string { return fmt.Sprintf("%d/%s", l.N, l.Window) }

// Limiter is one algorithm bound to one limit: it decides a request of a key.
type Limiter interface {
	// Allow decides one request of key, and spends it when allowed.
	Allow(ctx context.Context, key string) (bool, error)
}

// Charger is a Limiter that can decide n requests of a key at once, as one
// request of cost n. The memory experiment uses it to bring a key to its
// limit in one call.
type Charger interface {
	// AllowN decides n requests of key at once, all or none.
	AllowN(ctx context.Context, key string, n int) (bool, error)
}

// Piper is a Limiter whose decision is one script call that can be queued on a
// pipeline (after Prepare), for filling many keys quickly.
type Piper interface {
	Charger
	// Prepare loads the script on every node, so that Queue can use EVALSHA.
	Prepare(ctx context.Context) error
	// Queue adds a decision of cost n for key to pipe.
	Queue(ctx context.Context, pipe redis.Pipeliner, key string, n int)
}

// Algorithm is one algorithm or library under test.
type Algorithm struct {
	// ID is short and stable: "fixed", "log", "counter", "bucket", "stagedoor",
	// "redis_rate", "ulule". It names the algorithm in keys and JSON.
	ID string
	// Name is what the tables print, such as "sliding window log".
	Name string
	// Origin says where it comes from: "lab script", "Stagedoor" or "Go library".
	Origin string
	// New makes a limiter of l on rdb whose keys all start with prefix.
	New func(rdb redis.UniversalClient, prefix string, l Limit) (Limiter, error)
}

// Algorithms lists every algorithm the lab measures: the lab's four scripts,
// Stagedoor's limiter, then the Go libraries.
func Algorithms() []Algorithm {
	out := []Algorithm{
		{ID: "fixed", Name: "fixed window", Origin: "lab script", New: scriptNew(fixedWindowScript)},
		{ID: "log", Name: "sliding window log", Origin: "lab script", New: scriptNew(slidingLogScript)},
		{ID: "counter", Name: "sliding window counter", Origin: "lab script", New: scriptNew(slidingCounterScript)},
		{ID: "bucket", Name: "token bucket", Origin: "lab script", New: scriptNew(tokenBucketScript)},
		stagedoorAlgorithm,
	}
	return append(out, peers...)
}

// AlgorithmByID returns the algorithm with that ID.
func AlgorithmByID(id string) (Algorithm, bool) {
	for _, a := range Algorithms() {
		if a.ID == id {
			return a, true
		}
	}
	return Algorithm{}, false
}
