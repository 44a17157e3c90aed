package concurrency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/guard"
	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/protect"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// Defaults of Options.
const (
	// DefaultLease is a lease's time to live when Options.Lease is 0.
	DefaultLease = 10 * time.Second
	// DefaultTimeout is the deadline of one Redis call when Options.Timeout is 0.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultRetryAfter is Decision.RetryAfter of a refusal when
	// Options.RetryAfter is 0.
	DefaultRetryAfter = time.Second
)

// Options configure a Limiter. Name and Max are required.
type Options struct {
	// Name names the limit, such as "buyer-concurrency": it is part of every key
	// (<Prefix>cc:{<Name>:<identity>}) and the limit label of the metrics.
	Name ratelimit.Name
	// Max is how many requests of one identity may be in flight at once, counted
	// across every instance.
	Max int
	// Mode is the mode to start in (ratelimit.Enforce, Shadow or Off); SetMode
	// changes it at run time. Empty means Enforce.
	Mode ratelimit.Mode
	// Lease is a lease's time to live in Redis; default DefaultLease (10 s). Run
	// renews the leases of the requests still running every Lease/3, so only a
	// dead instance's leases expire.
	Lease time.Duration
	// Prefix is put before every key (the configuration's Redis prefix, "sd:").
	Prefix string
	// Tag, when set, is the hash tag of every key before its identity:
	// <Prefix>cc:{<Tag>:<identity>}:<Name>, the slot of the rate limits'
	// buckets of the same tag (ratelimit.Definition.Tag), so that a lease can
	// ride in their script (Rider). Unset: <Prefix>cc:{<Name>:<identity>}.
	Tag string
	// Timeout is the deadline of one Redis call; default DefaultTimeout (50 ms).
	// It cuts a read short only if the client was built with
	// ContextTimeoutEnabled: true; otherwise the client's ReadTimeout applies.
	Timeout time.Duration
	// BreakerFailures is how many Redis failures in a row open a node's breaker;
	// default 5.
	BreakerFailures int
	// BreakerCooldown is how long an open breaker refuses to call Redis before it
	// lets one probe through; default 1 s.
	BreakerCooldown time.Duration
	// RetryAfter is Decision.RetryAfter of a refusal; default DefaultRetryAfter.
	RetryAfter time.Duration
	// NodeOf names the Redis node that serves a key (conn.NodeOf), so that each
	// node has a breaker and deadlines of its own; nil: one breaker for all.
	NodeOf func(ctx context.Context, key string) string
	// Registerer receives stagedoor_concurrency_decisions_total,
	// stagedoor_concurrency_leases and stagedoor_redis_calls_total; nil registers
	// nothing. A collector already registered there by another Limiter is shared.
	Registerer prometheus.Registerer
	// Logger receives the breakers' changes of state, each node's outage and
	// leases found lost at renewal; nil logs nothing.
	Logger *slog.Logger
}

// Validate reports whether New would accept the options.
func (o Options) Validate() error {
	switch {
	case o.Name == "":
		return errors.New("concurrency: the limit has no name")
	case o.Max < 1:
		return fmt.Errorf("concurrency: limit %q: Max %d is not at least 1", o.Name, o.Max)
	case o.Lease < 0, o.Timeout < 0, o.BreakerFailures < 0, o.BreakerCooldown < 0, o.RetryAfter < 0:
		return fmt.Errorf("concurrency: limit %q: negative option", o.Name)
	case o.Lease > 0 && o.Lease < 3*time.Millisecond:
		return fmt.Errorf("concurrency: limit %q: Lease %s is shorter than 3 ms", o.Name, o.Lease)
	case strings.ContainsAny(o.Tag, "{}"):
		return fmt.Errorf("concurrency: limit %q: tag %q has a brace", o.Name, o.Tag)
	}
	if err := protect.CheckMode(o.Mode); err != nil {
		return fmt.Errorf("concurrency: limit %q: %w", o.Name, err)
	}
	return nil
}

// Outcome is what the limiter decided about one request: one of the
// protections' own (protect.Outcome). It is also the decision label of
// stagedoor_concurrency_decisions_total.
type Outcome = protect.Outcome

const (
	// OutcomeAllowed: fewer than Max requests of the identity were in flight;
	// this one took a lease.
	OutcomeAllowed = protect.OutcomeAllowed
	// OutcomeDenied: Max requests of the identity were in flight and the limit
	// enforces: the request is refused and took no lease.
	OutcomeDenied = protect.OutcomeDenied
	// OutcomeShadowDenied: the limit is in shadow mode and would have refused;
	// the request goes on, and took a lease, so that the count stays true.
	OutcomeShadowDenied = protect.OutcomeShadowDenied
	// OutcomeFailOpen: Redis could not answer (an error, the deadline, or the
	// node's breaker open); the request goes on without a lease.
	OutcomeFailOpen = protect.OutcomeFailOpen
	// OutcomeOff: the limit is off; Redis was not called.
	OutcomeOff = protect.OutcomeOff
)

// outcomes are the counted outcomes, in the order of Limiter.counts.
var outcomes = [...]Outcome{OutcomeAllowed, OutcomeDenied, OutcomeShadowDenied, OutcomeFailOpen, OutcomeOff}

// Decision is what Enter decided about one request.
type Decision struct {
	// Limit is the limit's name, such as "buyer-concurrency".
	Limit ratelimit.Name
	// Allowed is false only for OutcomeDenied.
	Allowed bool
	// Outcome says why.
	Outcome Outcome
	// InFlight is how many requests of the identity are in flight on all
	// instances after the decision, this one included if it took a lease:
	// 1 to Max when allowed, at least Max when refused, above Max only for
	// OutcomeShadowDenied. It is 0 when not known (OutcomeFailOpen, OutcomeOff).
	InFlight int
	// Max is the limit's Max.
	Max int
	// RetryAfter is a suggestion for a Retry-After header when the request is
	// refused (or would have been, for OutcomeShadowDenied); 0 otherwise.
	RetryAfter time.Duration
}

// Limiter counts the requests of each identity in flight across every
// instance, in Redis. Safe for concurrent use.
type Limiter struct {
	rdb        redis.UniversalClient
	name       ratelimit.Name
	max        int
	leaseMS    int64
	lease      time.Duration
	prefix     string
	tag        string
	retryAfter time.Duration
	mode       protect.ModeSwitch
	nodes      *guard.Nodes // the deadline and breaker of every Redis call, per node
	logger     *slog.Logger
	counts     [len(outcomes)]prometheus.Counter
	live       prometheus.Gauge // this instance's live leases of the limit
	leases     registry
	released   releases // the leases given back, on their way to Redis

	instance string        // random, this Limiter's part of every lease id
	seq      atomic.Uint64 // the other part
}

// New returns a Limiter on rdb (a *redis.Client, *redis.ClusterClient or
// conn's cluster client). It panics if the options are not valid (see
// Options.Validate). Call Run for the leases to be renewed.
func New(rdb redis.UniversalClient, o Options) *Limiter {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	if o.Mode == "" {
		o.Mode = ratelimit.Enforce
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		panic(err)
	}
	l := &Limiter{
		rdb: rdb, name: o.Name, max: o.Max, lease: o.Lease, leaseMS: max(1, o.Lease.Milliseconds()),
		prefix: o.Prefix, tag: o.Tag, retryAfter: o.RetryAfter, logger: logger,
		instance: hex.EncodeToString(id[:]),
		nodes: guard.NewNodes(guard.Options{Name: string(o.Name), Timeout: o.Timeout,
			Failures: o.BreakerFailures, Cooldown: o.BreakerCooldown, Logger: o.Logger}, o.NodeOf, o.Registerer),
	}
	l.leases.init()
	l.SetMode(o.Mode)
	decisions := metrics.Register(o.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stagedoor_concurrency_decisions_total",
		Help: "Concurrency-limit decisions, one per limit per request, by limit and decision " +
			"(allowed, denied, shadow_denied, fail_open, off).",
	}, []string{"limit", "decision"}))
	for i, out := range outcomes {
		l.counts[i] = decisions.WithLabelValues(string(o.Name), string(out))
	}
	l.live = metrics.Register(o.Registerer, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stagedoor_concurrency_leases",
		Help: "Leases this instance holds in Redis for requests in flight, by limit.",
	}, []string{"limit"})).WithLabelValues(string(o.Name))
	return l
}

// Name is the limit's name.
func (l *Limiter) Name() ratelimit.Name { return l.name }

// Max is how many requests of one identity may be in flight.
func (l *Limiter) Max() int { return l.max }

// Lease is a lease's time to live.
func (l *Limiter) Lease() time.Duration { return l.lease }

// Mode is the mode in force.
func (l *Limiter) Mode() ratelimit.Mode { return l.mode.Load() }

// SetMode changes the mode for the requests that follow; requests already in
// flight keep their leases until they end. It panics on a mode that is not
// Enforce, Shadow or Off (read one with ratelimit.ParseMode).
func (l *Limiter) SetMode(m ratelimit.Mode) {
	if _, err := protect.ParseMode(string(m)); err != nil {
		panic(fmt.Errorf("concurrency: limit %q: %w", l.name, err))
	}
	l.mode.Store(m)
}

// noRelease is the release func of a request that took no lease.
func noRelease() {}

// Enter counts one request of identity in flight. It returns the decision and
// a release func that must be called when the request ends, allowed or not;
// calling it again does nothing. release does not use ctx (which may be
// cancelled by then): it removes the lease from Redis under a deadline of its
// own, in one pipelined round with the leases other requests gave back
// meanwhile, and when Redis cannot answer the lease lapses after Lease.
//
// It never returns an error. In Enforce mode a request over Max is refused
// (Allowed false, OutcomeDenied) and takes no lease. In Shadow mode every
// request takes a lease and goes on, and the one that would have been refused
// is counted OutcomeShadowDenied. Off calls no Redis at all. When Redis cannot
// answer, the request goes on without a lease (OutcomeFailOpen).
//
// If the deadline passes after Redis ran the script, the request goes on as
// OutcomeFailOpen but the lease it took stays counted, not renewed, until it
// lapses after Lease.
func (l *Limiter) Enter(ctx context.Context, identity string) (Decision, func()) {
	d := Decision{Limit: l.name, Allowed: true, Max: l.max}
	mode := l.Mode()
	if mode == ratelimit.Off {
		d.Outcome = OutcomeOff
		l.count(d.Outcome)
		return d, noRelease
	}
	key := l.key(identity)
	id := l.newID()
	shadow := mode == ratelimit.Shadow
	var took bool
	var before int64
	err := l.nodes.For(ctx, key).Do(ctx, func(rctx context.Context) error {
		var err error
		took, before, err = acquire(rctx, l.rdb, key, id, l.max, l.leaseMS, shadow)
		return err
	})
	if err != nil {
		d.Outcome = OutcomeFailOpen
		l.count(d.Outcome)
		return d, noRelease
	}
	return l.decided(&d, key, id, took, before)
}

// decided completes d from what the acquire script said (took the lease, and
// how many were live before), counts it, and keeps the lease taken.
func (l *Limiter) decided(d *Decision, key, id string, took bool, before int64) (Decision, func()) {
	switch {
	case !took:
		d.Allowed, d.Outcome, d.InFlight, d.RetryAfter = false, OutcomeDenied, int(before), l.retryAfter
	case before >= int64(l.max):
		d.Outcome, d.InFlight, d.RetryAfter = OutcomeShadowDenied, int(before)+1, l.retryAfter
	default:
		d.Outcome, d.InFlight = OutcomeAllowed, int(before)+1
	}
	l.count(d.Outcome)
	if !took {
		return *d, noRelease
	}
	ls := &lease{key: key, id: id}
	l.leases.add(ls)
	l.live.Inc()
	return *d, func() { l.release(ls) }
}

// release forgets the lease here and removes it from Redis, once.
func (l *Limiter) release(ls *lease) {
	if !ls.done.CompareAndSwap(false, true) {
		return
	}
	l.leases.remove(ls)
	l.live.Dec()
	l.remove(ls)
}

func (l *Limiter) count(o Outcome) {
	if i := slices.Index(outcomes[:], o); i >= 0 {
		l.counts[i].Inc()
	}
}

// Key is the Redis key of identity's leases: <prefix>cc:{<name>:<identity>}
// (<prefix>cc:{<tag>:<identity>}:<name> with a Tag), with an identity longer
// than ratelimit.MaxIdentityBytes replaced by its SHA-256 (as the rate limiter
// does), so that no client chooses a long key. The hash tag keeps the key in
// one slot of a Redis Cluster.
func (l *Limiter) Key(identity string) string { return l.key(identity) }

func (l *Limiter) key(identity string) string {
	return protect.IdentityKey(l.prefix, "cc", l.name, l.tag, identity)
}

// newID is a lease id unique to this request: the Limiter's random instance id
// and a counter.
func (l *Limiter) newID() string {
	return l.instance + ":" + strconv.FormatUint(l.seq.Add(1), 36)
}
