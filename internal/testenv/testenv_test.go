package testenv

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestDatabaseIsMigratedAndOwn(t *testing.T) {
	t.Parallel()
	a, b := Postgres(t), Postgres(t)
	ctx := context.Background()
	if _, err := a.Exec(ctx, `INSERT INTO accounts (id, kind, email, name, password_hash)
		VALUES (gen_random_uuid(), 'buyer', 'a@example.com', 'A', 'x')`); err != nil {
		t.Fatalf("insert into the migrated database: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second database sees %d accounts of the first", n)
	}
}

func TestRedisPrefixIsCleaned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var prefix string
	t.Run("writes", func(t *testing.T) {
		client, p := Redis(t)
		prefix = p
		if err := client.Set(ctx, p+"k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	})
	client, _ := Redis(t)
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("keys left under %s after the test: %v", prefix, keys)
	}
}

func TestPrivateRedisStops(t *testing.T) {
	t.Parallel()
	r := StartPrivateRedis(t)
	r.Stop()
	r.Stop()
}

// A CommandCounter counts only the commands it names, pipelined ones too.
func TestCommandCounterCountsTheNamedCommands(t *testing.T) {
	rdb, prefix := Redis(t)
	pings := &CommandCounter{Names: []string{"ping"}}
	rdb.AddHook(pings)
	ctx := context.Background()
	for range 3 {
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Set(ctx, prefix+"k", "v", 0)
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Ping(ctx)
		p.Get(ctx, prefix+"k")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n, most := pings.Sent(), pings.Most(); n != 4 || most != 1 {
		t.Fatalf("%d PINGs counted, at most %d at once; want 4, 1", n, most)
	}
}
