package shed

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/guard"
	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/protect"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// Defaults of FleetOptions.
const (
	// DefaultReserve is the share of the fleet's capacity kept for critical traffic.
	DefaultReserve = 0.20
	// DefaultFleetInterval is how often a Fleet flushes its counts and reads
	// the fleet's back.
	DefaultFleetInterval = 100 * time.Millisecond
	// MaxFleetInterval is the longest Interval a Fleet accepts: a report is
	// of the last second, and should not be much older than that.
	MaxFleetInterval = 500 * time.Millisecond
	// FleetRetryAfter is the RetryAfter of a request the fleet shedder refuses:
	// the span of its estimate of the fleet's rate.
	FleetRetryAfter = time.Second
)

// FleetOptions configure a Fleet. A zero Capacity makes a Fleet that decides
// nothing.
type FleetOptions struct {
	// Capacity is how many requests a second the whole fleet serves, every
	// class together. 0: the shedder allows everything and never calls Redis.
	Capacity int
	// Reserve is the share of Capacity kept for critical traffic: normal and
	// sheddable together may use at most (1 − Reserve) × Capacity. It must be
	// below 1; 0 means DefaultReserve.
	Reserve float64
	// Prefix is put before the one key: <Prefix>fleet:{usage}, a hash of one
	// field per instance.
	Prefix string
	// Timeout is the deadline of one Redis call; default 50 ms. It cuts a read
	// short only if the client was built with ContextTimeoutEnabled: true.
	Timeout time.Duration
	// BreakerFailures is how many failed calls in a row open the breaker
	// (default 5); it then refuses without calling Redis for BreakerCooldown
	// (default 1 s) before letting one probe through.
	BreakerFailures int
	BreakerCooldown time.Duration
	// NodeOf names the Redis node that serves a key (conn.NodeOf), as in
	// ratelimit.Options; nil: one breaker for all.
	NodeOf func(ctx context.Context, key string) string
	// Registerer receives the shedder's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives the failing open and its end, and the breaker's changes
	// of state; nil logs nothing.
	Logger *slog.Logger
	// Mode is the mode at start; "" is Enforce.
	Mode ratelimit.Mode
	// Interval is how often this instance reports its rates to Redis and
	// reads the fleet's back; default DefaultFleetInterval, at most
	// MaxFleetInterval. A report counts for max(1 s, 4 × Interval).
	Interval time.Duration
}

// Validate reports whether NewFleet would accept the options.
func (o FleetOptions) Validate() error {
	switch {
	case o.Capacity < 0:
		return errors.New("shed: fleet capacity is negative")
	case o.Reserve < 0 || o.Reserve >= 1:
		return errors.New("shed: fleet reserve is not in [0, 1)")
	case o.Interval < 0 || o.Interval > MaxFleetInterval:
		return errors.New("shed: fleet interval is not in [0, 500ms]")
	case o.Timeout < 0 || o.BreakerFailures < 0 || o.BreakerCooldown < 0:
		return errors.New("shed: negative option")
	}
	return protect.CheckMode(o.Mode)
}

// Fleet is the fleet usage shedder, "fleet-usage": it keeps a share of the
// fleet's capacity for critical traffic. Every instance counts the requests
// it is offered, by class. Every Interval, Run reports this instance's offered
// rates over its last second to Redis and reads back the sum of every
// instance's report, in one script call, and works out from the fleet's rates
// the probability of admitting a request of each class. Admit then admits
// each request with its class's probability, so that the fleet's admitted
// rate of the class meets its budget however many instances there are. See
// the package documentation for the arithmetic. Safe for concurrent use; Run
// is called once.
type Fleet struct {
	rdb      redis.Scripter
	key      string
	interval time.Duration
	reserve  float64
	capacity atomic.Int64
	mode     protect.ModeSwitch
	offered  [numClasses]paddedCount // since the last flush
	state    atomic.Pointer[fleetState]
	nodes    *guard.Nodes
	logger   *slog.Logger
	counts   *decisions

	id        string        // this instance's field in the key
	stale     time.Duration // how long a report counts
	rate      [numClasses]prometheus.Gauge
	ratio     [numClasses]prometheus.Gauge
	failOpen  prometheus.Gauge
	instances prometheus.Gauge

	// Run's own.
	own     []flushed // this instance's flushes of the last second
	since   time.Time // when the counts in offered began
	failing bool
}

// paddedCount is a counter on a cache line of its own.
type paddedCount struct {
	atomic.Int64
	_ [56]byte
}

// fleetState is what Admit needs, replaced whole every Interval.
type fleetState struct {
	failOpen bool
	admit    [numClasses]float64 // the probability of admitting a request of the class
	reason   [numClasses]string  // why a class is shed, when admit < 1
}

var (
	admitAll    = &fleetState{admit: [numClasses]float64{1, 1, 1, 1}}
	failingOpen = &fleetState{failOpen: true, admit: admitAll.admit}
)

// NewFleet returns a fleet usage shedder on rdb. It panics if the options are
// not valid (see FleetOptions.Validate). Call Run for it to decide anything:
// until its first exchange with Redis it admits everything.
func NewFleet(rdb redis.UniversalClient, o FleetOptions) *Fleet {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	f := &Fleet{
		rdb:      rdb,
		key:      protect.Key(o.Prefix, "fleet", "usage", ""),
		interval: cmp.Or(o.Interval, DefaultFleetInterval),
		reserve:  cmp.Or(o.Reserve, DefaultReserve),
		logger:   o.Logger,
		counts:   newDecisions(o.Registerer, FleetUsage),
		rate: classGauges(o.Registerer, "stagedoor_fleet_usage_rate",
			"The fleet's offered rate of each class, in requests a second, as this instance estimates it."),
		ratio: classGauges(o.Registerer, "stagedoor_fleet_usage_admit_ratio",
			"The share of each class's requests this instance admits, so that the fleet stays within the class's budget."),
		failOpen: metrics.Register(o.Registerer, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stagedoor_fleet_usage_fail_open",
			Help: "1 while the fleet usage shedder cannot reach Redis and admits everything, 0 otherwise.",
		})),
		instances: metrics.Register(o.Registerer, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stagedoor_fleet_usage_instances",
			Help: "How many instances' reports the fleet usage shedder's last estimate summed.",
		})),
		id: strconv.FormatUint(rand.Uint64(), 36),
	}
	f.stale = max(window, 4*f.interval)
	if f.logger == nil {
		f.logger = slog.New(slog.DiscardHandler)
	}
	f.nodes = guard.NewNodes(guard.Options{Name: string(FleetUsage), Timeout: o.Timeout,
		Failures: o.BreakerFailures, Cooldown: o.BreakerCooldown, Logger: o.Logger}, o.NodeOf, o.Registerer)
	f.capacity.Store(int64(o.Capacity))
	f.mode.Store(o.Mode)
	f.reset(time.Now())
	return f
}

// Admit decides a request of the class, from the state Run last worked out:
// no I/O, no lock, no allocation. An Exempt request is allowed and not
// counted; a Critical one is always allowed (counted allowed); a Normal or
// Sheddable one is admitted with its class's probability. While Redis cannot
// be reached every request is allowed as fail_open.
func (f *Fleet) Admit(class Class) Decision {
	if class == Exempt {
		return Decision{Allowed: true, Outcome: OutcomeAllowed, Shedder: FleetUsage}
	}
	c := counted(class)
	m := f.mode.Load()
	if m == protect.Off {
		return f.counts.decide(c, iOff, Decision{Allowed: true, Outcome: OutcomeOff, Shedder: FleetUsage})
	}
	if f.capacity.Load() == 0 {
		return f.counts.decide(c, iAllowed, Decision{Allowed: true, Outcome: OutcomeAllowed, Shedder: FleetUsage})
	}
	f.offered[c].Add(1)
	st := f.state.Load()
	if st.failOpen {
		return f.counts.decide(c, iFailOpen, Decision{Allowed: true, Outcome: OutcomeFailOpen, Shedder: FleetUsage})
	}
	if p := st.admit[c]; p >= 1 || rand.Float64() < p {
		return f.counts.decide(c, iAllowed, Decision{Allowed: true, Outcome: OutcomeAllowed, Shedder: FleetUsage})
	}
	d := Decision{Outcome: OutcomeShed, Shedder: FleetUsage, RetryAfter: FleetRetryAfter, Reason: st.reason[c]}
	if m == protect.Shadow {
		d.Allowed, d.Outcome = true, OutcomeShadowShed
		return f.counts.decide(c, iShadowShed, d)
	}
	return f.counts.decide(c, iShed, d)
}

// Name is FleetUsage.
func (f *Fleet) Name() ratelimit.Name { return FleetUsage }

// Mode is the mode in force.
func (f *Fleet) Mode() ratelimit.Mode { return f.mode.Load() }

// SetMode changes the mode for the requests that follow: Enforce, Shadow
// (decide and count, refuse nothing) or Off (not evaluated, no Redis traffic;
// from the next Interval on). It panics on any other mode; read modes with
// ratelimit.ParseMode.
func (f *Fleet) SetMode(m ratelimit.Mode) { f.mode.Store(m) }

// Capacity is the fleet's capacity in force, in requests a second.
func (f *Fleet) Capacity() int { return int(f.capacity.Load()) }
