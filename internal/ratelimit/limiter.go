package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/guard"
	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/protect"
)

// Mode is what a limit does with its decisions, changed at run time by
// SetSetting: the protections' one Mode (protect.Mode).
type Mode = protect.Mode

const (
	// Enforce refuses a request the bucket has no token for.
	Enforce = protect.Enforce
	// Shadow evaluates and spends the bucket as Enforce would but refuses nothing:
	// a would-be refusal is counted shadow_denied, the request goes on, and the
	// request's other buckets are spent as if the shadow limit were not there.
	Shadow = protect.Shadow
	// Off is the kill switch: the limit is not evaluated, Redis is not called for it,
	// and each request is counted off.
	Off = protect.Off
)

// ParseMode reads "enforce", "shadow" or "off" (protect.ParseMode).
func ParseMode(s string) (Mode, error) { return protect.ParseMode(s) }

// Policy is how a limit uses Redis: what it does while Redis cannot answer (an
// error, the deadline, or the breaker open), FailOpen or Fallback, and whether
// it leases its tokens (FailOpen|Leased).
type Policy int

const (
	// FailOpen allows and counts fail_open: for limits that protect fairness.
	FailOpen Policy = iota
	// Fallback decides with an in-process bucket of the same limit on this instance
	// and counts fallback_allowed or fallback_denied: for limits that protect
	// capacity, such as login before a password hash. A Shadow limit is counted
	// fail_open whatever its policy.
	Fallback
	// Leased, or-ed into FailOpen or Fallback (FailOpen|Leased), lets each
	// instance take the limit's tokens from Redis a small batch at a time and spend
	// them locally, for a limit whose keys are hot: many requests a second on one
	// key, such as hold-organizer on a big on-sale. See lease.go for how, and for
	// what it costs in precision. Only an enforcing limit leases.
	Leased Policy = 1 << 4
)

// String returns "fail-open" or "fallback", with "+leased" when Leased is set.
func (p Policy) String() string {
	s := "fail-open"
	if p.fallback() {
		s = "fallback"
	}
	if p.leased() {
		s += "+leased"
	}
	return s
}

// fallback reports whether the limit asks its in-process bucket while Redis
// cannot answer.
func (p Policy) fallback() bool { return p&^Leased == Fallback }

// leased reports whether the limit leases its tokens.
func (p Policy) leased() bool { return p&Leased != 0 }

// Setting is the run-time part of a limit: its bucket and its mode.
type Setting struct {
	Limit Limit
	Mode  Mode
}

// Validate reports whether the setting can be applied.
func (s Setting) Validate() error {
	if _, err := ParseMode(string(s.Mode)); err != nil {
		return err
	}
	return s.Limit.Validate()
}

// String writes the setting such as "10/1m enforce".
func (s Setting) String() string { return s.Limit.String() + " " + string(s.Mode) }

// Definition declares one named limit, such as
// {Name: "hold-buyer", Setting: {PerMinute(10), Enforce}, Policy: FailOpen}, or
// {Name: "hold-organizer", Setting: {PerSecond(200), Enforce}, Policy: FailOpen|Leased}
// for a limit whose keys are hot.
type Definition struct {
	Name    Name
	Setting Setting
	Policy  Policy
	// Tag, when set, is the hash tag of the limit's buckets before their
	// identity: <prefix>rl:{<Tag>:<identity>}:<limit>, so that the keys of
	// one identity tagged alike (hold-buyer's bucket and the buyer's leases
	// in flight, both "buyer") share a Redis Cluster slot and one script can
	// take them all (a Rider). Unset: <prefix>rl:{<limit>:<identity>}.
	Tag string
}

// Options configure a Limiter. Only Limits is required.
type Options struct {
	// Prefix is put before every key: <Prefix>rl:{<limit>:<identity>}.
	Prefix string
	// Timeout is the deadline of one decision's Redis calls; default 50 ms. It cuts
	// a read short only if the client was built with ContextTimeoutEnabled: true;
	// otherwise the client's ReadTimeout applies.
	Timeout time.Duration
	// BreakerFailures is how many Redis failures in a row open the breaker; default 5.
	BreakerFailures int
	// BreakerCooldown is how long an open breaker refuses to call Redis before it lets
	// one probe through; default 1 s.
	BreakerCooldown time.Duration
	// Registerer receives stagedoor_ratelimit_decisions_total; nil registers nothing.
	// A counter already registered there by another Limiter is shared.
	Registerer prometheus.Registerer
	// Limits are the named limits; a Check must name one of them.
	Limits []Definition
	// MaxLocalBuckets bounds the in-process fallback buckets, all limits together;
	// default 100 000.
	MaxLocalBuckets int
	// MaxDenials bounds each limit's cache of denials; default 100 000.
	MaxDenials int
	// SplitBySlot runs one script per Redis Cluster hash slot, as is done anyway for
	// a *redis.ClusterClient; set it when rdb is a wrapper around a cluster client.
	SplitBySlot bool
	// NodeOf names the Redis node that serves a key (conn.NodeOf), so that each
	// node has a breaker and deadlines of its own: a dead node fails open (or
	// falls back) only the buckets it serves. nil: one breaker for all.
	NodeOf func(ctx context.Context, key string) string
	// Logger receives the breakers' changes of state and each node's outage;
	// nil logs nothing.
	Logger *slog.Logger
	// Clock is the time of the in-process buckets and the denial cache; default
	// time.Now. Redis buckets always use Redis's clock.
	Clock func() time.Time
}

// Validate reports whether New would accept the options.
func (o Options) Validate() error {
	seen := make(map[Name]bool, len(o.Limits))
	for _, d := range o.Limits {
		switch {
		case d.Name == "":
			return errors.New("ratelimit: a limit has no name")
		case seen[d.Name]:
			return fmt.Errorf("ratelimit: limit %q is defined twice", d.Name)
		case d.Policy&^Leased != FailOpen && d.Policy&^Leased != Fallback:
			return fmt.Errorf("ratelimit: limit %q: unknown policy %d", d.Name, d.Policy)
		case strings.ContainsAny(d.Tag, "{}"):
			return fmt.Errorf("ratelimit: limit %q: tag %q has a brace", d.Name, d.Tag)
		}
		if err := d.Setting.Validate(); err != nil {
			return fmt.Errorf("ratelimit: limit %q: %w", d.Name, err)
		}
		seen[d.Name] = true
	}
	if o.Timeout < 0 || o.BreakerCooldown < 0 || o.BreakerFailures < 0 || o.MaxLocalBuckets < 0 || o.MaxDenials < 0 {
		return errors.New("ratelimit: negative option")
	}
	return nil
}

// Limiter decides requests against named limits kept in Redis. Safe for
// concurrent use.
type Limiter struct {
	rdb        Scripter
	prefix     string
	split      bool
	nodes      *guard.Nodes // the deadline and breaker of every Redis call, per node
	limits     map[Name]*limitState
	names      []Name
	local      *localBuckets
	clock      func() time.Time
	epoch      time.Time
	maxDenials int
	background sync.WaitGroup // lease fetches and returns under way
}

// limitState is one named limit; cfg is swapped whole by SetSetting.
type limitState struct {
	name   Name
	policy Policy
	tag    string // Definition.Tag
	cfg    atomic.Pointer[limitConfig]
	counts [len(outcomes)]prometheus.Counter
}

type limitConfig struct {
	setting       Setting
	interval, tau int64   // µs
	args          *[3]any // the bucket's ARGV for takeScript
	one           *[2]any // its ARGV for takeOneScript, when it is alone
	denials       *denials
	leases        *leases // the tokens this instance leased, when the limit leases; else nil
}

// New returns a Limiter on rdb. It panics if the options are not valid (see
// Options.Validate): the limit specs are checked when the configuration is read.
func New(rdb Scripter, opts Options) *Limiter {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	l := &Limiter{
		rdb:        rdb,
		prefix:     opts.Prefix,
		split:      opts.SplitBySlot,
		limits:     make(map[Name]*limitState, len(opts.Limits)),
		local:      newLocalBuckets(cmp.Or(opts.MaxLocalBuckets, 100_000)),
		clock:      opts.Clock,
		maxDenials: cmp.Or(opts.MaxDenials, 100_000),
	}
	if _, ok := rdb.(*redis.ClusterClient); ok {
		l.split = true
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	l.epoch = l.clock()
	l.nodes = guard.NewNodes(guard.Options{Name: "ratelimit", Timeout: opts.Timeout,
		Failures: opts.BreakerFailures, Cooldown: opts.BreakerCooldown, Logger: opts.Logger}, opts.NodeOf, opts.Registerer)
	vec := decisionsCounter(opts.Registerer)
	for _, d := range opts.Limits {
		st := &limitState{name: d.Name, policy: d.Policy, tag: d.Tag}
		for i, o := range outcomes {
			st.counts[i] = vec.WithLabelValues(string(d.Name), string(o))
		}
		st.cfg.Store(l.config(st, d.Setting))
		l.limits[d.Name] = st
		l.names = append(l.names, d.Name)
	}
	return l
}

func decisionsCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	return metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stagedoor_ratelimit_decisions_total",
		Help: "Rate-limit decisions, one per limit per request, by limit and decision " +
			"(allowed, denied, shadow_denied, fail_open, fallback_allowed, fallback_denied, off).",
	}, []string{"limit", "decision"}))
}

func (l *Limiter) config(st *limitState, s Setting) *limitConfig {
	iv, tau := s.Limit.gcra()
	c := &limitConfig{setting: s, interval: iv, tau: tau, args: scriptArgs(iv, tau, s.Mode == Enforce),
		one: oneArgs(iv, tau), denials: newDenials(l.maxDenials)}
	if st.policy.leased() && s.Mode == Enforce {
		c.leases = newLeases(l, st.name, s.Limit, l.maxDenials) // nil when a batch would be one token
	}
	return c
}

// SetSetting changes a limit's bucket and mode for the requests that follow, and
// forgets this instance's cached denials of that limit. Buckets already in Redis
// are kept and read under the new setting. A leased limit's unspent tokens are
// given back to Redis (in the background, under the old setting's interval), and
// the requests that follow lease anew under the new setting, or not at all when
// it is Shadow or Off. It returns an error for an unknown name or an invalid
// setting, and changes nothing then.
func (l *Limiter) SetSetting(name Name, s Setting) error {
	st, ok := l.limits[name]
	if !ok {
		return fmt.Errorf("ratelimit: no limit named %q", name)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("ratelimit: limit %q: %w", name, err)
	}
	if old := st.cfg.Swap(l.config(st, s)); old.leases != nil {
		old.leases.close()
	}
	return nil
}

// Setting returns the setting in force for the named limit, and false if there is
// no such limit.
func (l *Limiter) Setting(name Name) (Setting, bool) {
	st, ok := l.limits[name]
	if !ok {
		return Setting{}, false
	}
	return st.cfg.Load().setting, true
}

// Names returns the names of the limits, in the order they were defined.
func (l *Limiter) Names() []Name { return slices.Clone(l.names) }

// key is the Redis key of a bucket: <prefix>rl:{<limit>:<identity>}, or
// <prefix>rl:{<tag>:<identity>}:<limit> for a limit with a Tag, with an
// identity longer than MaxIdentityBytes replaced by its SHA-256, so that no
// client, whatever it sends, chooses a key longer than about 100 bytes
// (protect.IdentityKey).
func (l *Limiter) key(limit Name, identity string) string {
	var tag string
	if st := l.limits[limit]; st != nil {
		tag = st.tag
	}
	return protect.IdentityKey(l.prefix, "rl", limit, tag, identity)
}

// Key is the Redis key of the named limit's bucket for identity.
func (l *Limiter) Key(limit Name, identity string) string { return l.key(limit, identity) }

// HashTag is the hash tag {<tag>:<identity>} of the keys of identity tagged
// tag, with an identity longer than MaxIdentityBytes replaced by its SHA-256:
// the keys of other packages that carry it share the slot of the limits'
// buckets of that Tag (Definition.Tag). It is protect.HashTag.
func HashTag(tag, identity string) string { return protect.HashTag(tag, identity) }

// MaxIdentityBytes is the longest identity kept as it is in a bucket's key
// (protect.MaxIdentityBytes).
const MaxIdentityBytes = protect.MaxIdentityBytes

// now is the limiter's clock in µs (monotonic with the default clock).
func (l *Limiter) now() int64 { return l.clock().Sub(l.epoch).Microseconds() }
