// Package conn opens Stagedoor's connections to PostgreSQL and Redis, and says
// when a failure is theirs (Unavailable) rather than the statement's. It owns
// no data: it only makes the clients the other packages use.
package conn

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/protect"
)

// Postgres opens a pool of at most size connections to databaseURL. It does not
// wait for the server: readiness reports whether PostgreSQL answers.
func Postgres(ctx context.Context, databaseURL string, size int) (*pgxpool.Pool, error) {
	return postgres(ctx, "DATABASE_URL", databaseURL, size, false, "")
}

// PostgresPooler is Postgres for a transaction pooler at databaseURL
// (PgBouncer with pool_mode=transaction), which may run each transaction of
// one connection on another server connection: no statement is prepared to
// be used again, where it may not exist (or exist already). Every query goes
// as one Parse, Bind, Describe and Execute of the unnamed statement, its
// arguments in text, in one round trip (pgx.QueryExecModeExec); unlike describe-exec's
// two round trips, none can land on another server connection between its
// description and its execution.
func PostgresPooler(ctx context.Context, databaseURL string, size int) (*pgxpool.Pool, error) {
	return postgres(ctx, "DATABASE_URL", databaseURL, size, true, "")
}

// SessionsName is the application_name of PostgresSessions's connections,
// as pg_stat_activity shows them.
const SessionsName = "stagedoor-sessions"

// PostgresSessions is Postgres for directURL (STAGEDOOR_DIRECT_DATABASE_URL),
// PostgreSQL itself behind a transaction pooler: a small pool for what needs a
// session of its own, its connections named SessionsName.
func PostgresSessions(ctx context.Context, directURL string, size int) (*pgxpool.Pool, error) {
	return postgres(ctx, "STAGEDOOR_DIRECT_DATABASE_URL", directURL, size, false, SessionsName)
}

func postgres(ctx context.Context, variable, databaseURL string, size int, pooler bool, name string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", variable, err)
	}
	cfg.MaxConns = int32(size)
	cfg.MinConns = 0
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if pooler {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	if name != "" {
		if cfg.ConnConfig.RuntimeParams == nil {
			cfg.ConnConfig.RuntimeParams = map[string]string{}
		}
		cfg.ConnConfig.RuntimeParams["application_name"] = name
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", variable, err)
	}
	return pool, nil
}

// Redis makes a client from redisURL: comma-separated host:port addresses of a
// Redis Cluster, or one redis:// URL. Cluster mode is detected, not guessed:
// the one server of a URL is asked (INFO cluster, within a second) whether it
// is a cluster node, and if so it seeds a cluster client, whose every script
// then stays in one hash slot. A server that cannot be asked at start is taken
// as a single server, and logger says so. Deadlines are short, because every
// caller has a policy for when Redis does not answer.
func Redis(ctx context.Context, redisURL string, logger *slog.Logger) (redis.UniversalClient, error) {
	opts := &redis.UniversalOptions{
		DialTimeout:           250 * time.Millisecond,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		ContextTimeoutEnabled: true,
		MaxRetries:            1,
		// One dial a call: go-redis would otherwise dial a dead node five
		// times, 100 ms apart, and spend a caller's whole deadline on it.
		DialerRetries: 1,
		PoolSize:      64,
		// RESP2: under RESP3 go-redis first reads each connection for push
		// notifications before every command, a syscall a command that
		// Stagedoor, which subscribes to nothing, has no use for.
		Protocol: 2,
	}
	if strings.Contains(redisURL, ",") {
		for _, addr := range strings.Split(redisURL, ",") {
			addr = strings.TrimPrefix(strings.TrimSpace(addr), "redis://")
			if addr != "" {
				opts.Addrs = append(opts.Addrs, addr)
			}
		}
		return newCluster(opts), nil
	}
	parsed, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opts.Addrs = []string{parsed.Addr}
	opts.Username, opts.Password, opts.TLSConfig = parsed.Username, parsed.Password, parsed.TLSConfig
	switch clustered, err := isClusterNode(ctx, parsed); {
	case err != nil:
		if logger != nil {
			logger.Warn("Redis did not answer at start: using REDIS_URL as one server; if it is a node of a Redis Cluster, list the cluster's nodes in REDIS_URL (host:port,host:port,…)",
				"addr", parsed.Addr, "error", err)
		}
	case clustered && parsed.DB != 0:
		return nil, fmt.Errorf("REDIS_URL: %s is a Redis Cluster node, and a cluster has no database %d: write it as host:port (or several, comma-separated)", parsed.Addr, parsed.DB)
	case clustered:
		return newCluster(opts), nil
	}
	opts.DB = parsed.DB
	rdb := redis.NewUniversalClient(opts)
	rdb.AddHook(nodeHook{})
	return rdb, nil
}

// isClusterNode asks the server whether cluster mode is enabled on it.
func isClusterNode(ctx context.Context, o *redis.Options) (bool, error) {
	probe := redis.NewClient(&redis.Options{Addr: o.Addr, Username: o.Username, Password: o.Password,
		TLSConfig: o.TLSConfig, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer probe.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := probe.Info(ctx, "cluster").Result()
	if err != nil {
		return false, err
	}
	return strings.Contains(info, "cluster_enabled:1"), nil
}

// SlotMapReload is how often a cluster client refreshes its map of which node
// serves which slot. go-redis refreshes it itself on a redirect, or when it is
// a minute old; but when a master dies, calls to it fail with "connection
// refused" before any redirect comes. Refreshed twice a second, the client
// follows a replica's promotion within half a second of it.
const SlotMapReload = 500 * time.Millisecond

// ClusterClient is a Redis Cluster client that refreshes its slot map every
// SlotMapReload until it is closed.
type ClusterClient struct {
	*redis.ClusterClient
	stop    context.CancelFunc
	done    chan struct{}
	fetched atomic.Uint64 // slot maps fetched (CLUSTER SLOTS answered)
}

func newCluster(o *redis.UniversalOptions) *ClusterClient {
	ctx, cancel := context.WithCancel(context.Background())
	c := &ClusterClient{stop: cancel, done: make(chan struct{})}
	co := o.Cluster()
	co.NewClient = func(opt *redis.Options) *redis.Client {
		node := redis.NewClient(opt)
		node.AddHook(nodeHook{&c.fetched})
		return node
	}
	c.ClusterClient = redis.NewClusterClient(co)
	go func() {
		defer close(c.done)
		// In the background; a failing reload is retried next tick.
		protect.Every(ctx, SlotMapReload, c.ReloadState)
	}()
	return c
}

// SlotMapFetches is how many times the client has fetched the cluster's slot
// map (a node answered CLUSTER SLOTS): every SlotMapReload while the cluster
// answers, and on redirects. go-redis uses a map from the moment it is fetched.
func (c *ClusterClient) SlotMapFetches() uint64 { return c.fetched.Load() }

// nodeHook is on the client of every node: it ends the go-redis outage of a
// node it connects to (see RedisLogger), and counts the slot maps it fetches
// (fetched nil: not a cluster's node), ending the outages of the nodes they
// no longer have.
type nodeHook struct{ fetched *atomic.Uint64 }

func (nodeHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err == nil {
			reached(addr)
		}
		return c, err
	}
}

func (h nodeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if slots, ok := cmd.(*redis.ClusterSlotsCmd); ok && err == nil && h.fetched != nil {
			h.fetched.Add(1)
			forgotten(slots.Val())
		}
		return err
	}
}

func (nodeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Close stops the refreshes and closes the client.
func (c *ClusterClient) Close() error {
	c.stop()
	<-c.done
	return c.ClusterClient.Close()
}

// ClusterHealth is how a Redis Cluster's nodes answer.
type ClusterHealth struct {
	// Nodes says of every node of the slot map "ok" or "down"; a map that
	// cannot be had at all reads as one node "cluster" down.
	Nodes map[string]string
	// WithoutReplica lists, sorted, the masters that answer and have no
	// replica that answers with its first sync done: if one of them dies
	// next, its slots stay unserved until it comes back (redundancy lost).
	WithoutReplica []string
}

// Health asks every node of the cluster's slot map, masters and replicas,
// for its replication (INFO replication): a node that answers is "ok", and a
// master that lists no replica online (its first sync done) is without one.
// Finding the map may take up to ctx's deadline (go-redis asks a node for it,
// maybe the dead one); each node's question then has NodePing of its own, so
// that a slow map does not make live nodes look dead.
func (c *ClusterClient) Health(ctx context.Context) ClusterHealth {
	var mu sync.Mutex
	h := ClusterHealth{Nodes: map[string]string{}}
	err := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		askCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), NodePing)
		defer cancel()
		addr := node.Options().Addr
		info, err := node.Info(askCtx, "replication").Result()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			h.Nodes[addr] = "down"
			return nil
		}
		h.Nodes[addr] = "ok"
		if infoField(info, "role") == "master" && !hasReplicaOnline(info) {
			h.WithoutReplica = append(h.WithoutReplica, addr)
		}
		return nil
	})
	if err != nil && len(h.Nodes) == 0 {
		h.Nodes["cluster"] = "down"
	}
	slices.Sort(h.WithoutReplica)
	return h
}

// hasReplicaOnline reports whether a master's INFO replication lists a
// replica online: "slave0:ip=…,port=…,state=online,offset=…,lag=…".
func hasReplicaOnline(info string) bool {
	for line := range strings.Lines(info) {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, ",state=online,") {
			return true
		}
	}
	return false
}

// infoField is the value of field in an INFO reply ("" when it has none).
func infoField(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// NodePing is how long Health waits for one node's answer.
const NodePing = 250 * time.Millisecond

// NodeOf returns the address of the master that serves key now, for
// accounting failures per node; "" when the slot map has none yet.
func NodeOf(ctx context.Context, rdb any, key string) string {
	switch c := rdb.(type) {
	case *ClusterClient:
		return masterAddr(ctx, c.ClusterClient, key)
	case *redis.ClusterClient:
		return masterAddr(ctx, c, key)
	case interface{ Options() *redis.Options }:
		return c.Options().Addr
	}
	return ""
}

func masterAddr(ctx context.Context, c *redis.ClusterClient, key string) string {
	node, err := c.MasterForKey(ctx, key)
	if err != nil {
		return ""
	}
	return node.Options().Addr
}
