package shed

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/protect"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// The levels of the worker utilization shedder.
const (
	// LevelNone sheds nothing.
	LevelNone = 0
	// LevelSheddable sheds every Sheddable request.
	LevelSheddable = 1
	// LevelNormal sheds every Sheddable and every Normal request. Critical
	// requests are never shed by this shedder: the in-flight bound is their
	// last resort.
	LevelNormal = 2
)

// Defaults of UtilizationOptions. Each signal is overloaded above its
// Overloaded threshold and calm below its Calm threshold; between the two it
// is neither, and holds the level where it is.
const (
	DefaultUtilizationInterval = 250 * time.Millisecond
	DefaultEscalateAfter       = time.Second
	DefaultRestoreAfter        = 5 * time.Second
	// A goroutine that waits 10 ms to run is waiting behind a run queue many
	// times the number of CPUs long; idle, the p99 is tens of µs and the
	// sampler's lag under 1.5 ms (2 CPUs, with -race).
	DefaultSchedOverloaded = 10 * time.Millisecond
	DefaultSchedCalm       = 4 * time.Millisecond
	// Queries take milliseconds: an acquire that waits 50 ms on average for a
	// connection is waiting behind a queue of them.
	DefaultPoolWaitOverloaded = 50 * time.Millisecond
	DefaultPoolWaitCalm       = 10 * time.Millisecond
	DefaultInFlightOverloaded = 0.8
	DefaultInFlightCalm       = 0.5
)

// UtilizationOptions configure a Utilization; all are optional.
type UtilizationOptions struct {
	// Interval is how often the signals are sampled; default 250 ms.
	Interval time.Duration
	// EscalateAfter is how long the signals must have been overloaded, sample
	// after sample, before the level goes up by one; default 1 s.
	EscalateAfter time.Duration
	// RestoreAfter is how long they must have been calm, sample after sample,
	// before the level goes down by one; default 5 s. It is also the
	// RetryAfter of a request shed.
	RestoreAfter time.Duration

	// SchedOverloaded and SchedCalm bound the scheduler's latency: the p99 of
	// the time goroutines waited to run over the last interval, or the
	// sampler's own lateness when that is more. Defaults 10 ms and 4 ms.
	SchedOverloaded, SchedCalm time.Duration
	// PoolWaitOverloaded and PoolWaitCalm bound the average wait of the
	// database acquires that had to wait, over the last interval. Defaults
	// 50 ms and 10 ms.
	PoolWaitOverloaded, PoolWaitCalm time.Duration
	// InFlightOverloaded and InFlightCalm bound the share of the in-flight
	// bound in use. Defaults 0.8 and 0.5.
	InFlightOverloaded, InFlightCalm float64

	// PoolWait returns the database pool's acquires that had to wait and the
	// total time they waited, both since the pool began (pgxpool.Stat's
	// EmptyAcquireCount and EmptyAcquireWaitTime). nil: no such signal.
	PoolWait func() (waits int64, waited time.Duration)
	// InFlight returns the requests in flight and the in-flight bound. nil (or
	// a bound of 0): no such signal.
	InFlight func() (inFlight, max int)

	// Registerer receives the shedder's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives each change of level; nil logs nothing.
	Logger *slog.Logger
	// Mode is the mode at start; "" is Enforce.
	Mode ratelimit.Mode
}

// Validate reports whether NewUtilization would accept the options.
func (o UtilizationOptions) Validate() error {
	if o.Interval < 0 || o.EscalateAfter < 0 || o.RestoreAfter < 0 || o.SchedOverloaded < 0 || o.SchedCalm < 0 ||
		o.PoolWaitOverloaded < 0 || o.PoolWaitCalm < 0 || o.InFlightOverloaded < 0 || o.InFlightCalm < 0 {
		return errors.New("shed: negative option")
	}
	o = o.withDefaults()
	if o.SchedCalm > o.SchedOverloaded || o.PoolWaitCalm > o.PoolWaitOverloaded || o.InFlightCalm > o.InFlightOverloaded {
		return errors.New("shed: a calm threshold is above its overloaded threshold")
	}
	return protect.CheckMode(o.Mode)
}

func (o UtilizationOptions) withDefaults() UtilizationOptions {
	o.Interval = cmp.Or(o.Interval, DefaultUtilizationInterval)
	o.EscalateAfter = cmp.Or(o.EscalateAfter, DefaultEscalateAfter)
	o.RestoreAfter = cmp.Or(o.RestoreAfter, DefaultRestoreAfter)
	o.SchedOverloaded = cmp.Or(o.SchedOverloaded, DefaultSchedOverloaded)
	o.SchedCalm = cmp.Or(o.SchedCalm, DefaultSchedCalm)
	o.PoolWaitOverloaded = cmp.Or(o.PoolWaitOverloaded, DefaultPoolWaitOverloaded)
	o.PoolWaitCalm = cmp.Or(o.PoolWaitCalm, DefaultPoolWaitCalm)
	o.InFlightOverloaded = cmp.Or(o.InFlightOverloaded, DefaultInFlightOverloaded)
	o.InFlightCalm = cmp.Or(o.InFlightCalm, DefaultInFlightCalm)
	return o
}

// Signals are one sample of what the worker utilization shedder watches.
type Signals struct {
	// SchedP99 is the p99 of the time goroutines waited to run over the last
	// interval (runtime/metrics /sched/latencies:seconds; the upper bound of
	// its bucket), 0 when the runtime timed none.
	SchedP99 time.Duration
	// SamplerLag is how late the sampler itself ran after its tick: one more
	// scheduling latency, measured every interval even when the runtime timed
	// none (it times one scheduling in eight). It is the median of the last
	// three intervals' lags, so that one late wake-up from the operating
	// system (seen idle: up to 20 ms on a shared 2-CPU machine) is not taken
	// for a saturated scheduler.
	SamplerLag time.Duration
	// PoolWait is the average wait of the database acquires that had to wait
	// over the last interval, 0 when none did.
	PoolWait time.Duration
	// InFlightRatio is the requests in flight over the in-flight bound, now.
	InFlightRatio float64
}

// sched is the scheduler's latency as the thresholds see it.
func (s Signals) sched() time.Duration { return max(s.SchedP99, s.SamplerLag) }

// Utilization is the worker utilization shedder, "worker-utilization": the
// last line of defence of one instance. Run samples signals of saturation;
// once they have been overloaded for EscalateAfter it sheds the lowest class
// still admitted (Sheddable, then Normal), and once they have been calm for
// RestoreAfter it admits the last class shed again, one level at a time.
// Safe for concurrent use; Run is called once.
type Utilization struct {
	o          UtilizationOptions // with defaults
	escalateAt int                // samples
	restoreAt  int                // samples
	mode       protect.ModeSwitch
	state      atomic.Pointer[utilState]
	logger     *slog.Logger
	counts     *decisions

	levelGauge                     prometheus.Gauge
	schedG, lagG, poolG, inFlightG prometheus.Gauge
	mu                             sync.Mutex // observe's state
	over, calm                     int        // samples in a row
	last                           Signals
	onChange                       func(from, to int) // for tests
	onSample                       func(Signals)      // for tests
}

// utilState is what Admit needs, replaced whole at each change of level.
type utilState struct {
	level  int
	reason [numClasses]string // why a class is shed at this level
}

// NewUtilization returns a worker utilization shedder at level 0. It panics if
// the options are not valid (see UtilizationOptions.Validate). Call Run for it
// to sample anything.
func NewUtilization(o UtilizationOptions) *Utilization {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	o = o.withDefaults()
	signals := metrics.Register(o.Registerer, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stagedoor_worker_utilization_signal",
		Help: "The worker utilization shedder's last sample of each signal: sched_p99_seconds, " +
			"sampler_lag_seconds, pool_wait_seconds, in_flight_ratio.",
	}, []string{"signal"}))
	u := &Utilization{
		o:          o,
		escalateAt: samples(o.EscalateAfter, o.Interval),
		restoreAt:  samples(o.RestoreAfter, o.Interval),
		logger:     o.Logger,
		counts:     newDecisions(o.Registerer, WorkerUtilization),
		levelGauge: metrics.Register(o.Registerer, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stagedoor_worker_utilization_level",
			Help: "The worker utilization shedder's level: 0 sheds nothing, 1 sheddable, 2 sheddable and normal.",
		})),
		schedG:    signals.WithLabelValues("sched_p99_seconds"),
		lagG:      signals.WithLabelValues("sampler_lag_seconds"),
		poolG:     signals.WithLabelValues("pool_wait_seconds"),
		inFlightG: signals.WithLabelValues("in_flight_ratio"),
	}
	if u.logger == nil {
		u.logger = slog.New(slog.DiscardHandler)
	}
	u.mode.Store(o.Mode)
	u.state.Store(u.levelState(LevelNone))
	u.levelGauge.Set(0)
	return u
}

// samples is how many samples of interval make up d, at least 1.
func samples(d, interval time.Duration) int {
	return max(int((d+interval-1)/interval), 1)
}

// Admit decides a request of the class at the level in force: no I/O, no
// lock, no allocation. Exempt is allowed and not counted; Critical is always
// allowed.
func (u *Utilization) Admit(class Class) Decision {
	if class == Exempt {
		return Decision{Allowed: true, Outcome: OutcomeAllowed, Shedder: WorkerUtilization}
	}
	c := counted(class)
	m := u.mode.Load()
	if m == protect.Off {
		return u.counts.decide(c, iOff, Decision{Allowed: true, Outcome: OutcomeOff, Shedder: WorkerUtilization})
	}
	st := u.state.Load()
	if !sheds(st.level, c) {
		return u.counts.decide(c, iAllowed, Decision{Allowed: true, Outcome: OutcomeAllowed, Shedder: WorkerUtilization})
	}
	d := Decision{Outcome: OutcomeShed, Shedder: WorkerUtilization, RetryAfter: u.o.RestoreAfter, Reason: st.reason[c]}
	if m == protect.Shadow {
		d.Allowed, d.Outcome = true, OutcomeShadowShed
		return u.counts.decide(c, iShadowShed, d)
	}
	return u.counts.decide(c, iShed, d)
}

// sheds reports whether a level sheds a class.
func sheds(level int, c Class) bool {
	switch c {
	case Sheddable:
		return level >= LevelSheddable
	case Normal:
		return level >= LevelNormal
	}
	return false
}

// Name is WorkerUtilization.
func (u *Utilization) Name() ratelimit.Name { return WorkerUtilization }

// Mode is the mode in force.
func (u *Utilization) Mode() ratelimit.Mode { return u.mode.Load() }

// SetMode changes the mode for the requests that follow: Enforce, Shadow
// (the levels change as in Enforce, and a request of a shed class is counted
// shadow_shed and allowed) or Off (not evaluated; the signals are still
// sampled for the gauges, but the level is held at 0). It panics on any other
// mode; read modes with ratelimit.ParseMode.
func (u *Utilization) SetMode(m ratelimit.Mode) { u.mode.Store(m) }

// Level is the level in force: LevelNone, LevelSheddable or LevelNormal.
func (u *Utilization) Level() int { return u.state.Load().level }

// Signals is the last sample of the signals.
func (u *Utilization) Signals() Signals {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last
}

// levelState is the state of a level, with the reasons a refusal gives.
func (u *Utilization) levelState(level int) *utilState {
	st := &utilState{level: level}
	for _, c := range Classes {
		if sheds(level, c) {
			st.reason[c] = fmt.Sprintf("this instance is overloaded and refuses %s requests for now (level %d of %d)",
				shedClasses(level), level, LevelNormal)
		}
	}
	return st
}

// shedClasses names the classes a level sheds.
func shedClasses(level int) string {
	switch {
	case level >= LevelNormal:
		return "normal and sheddable"
	case level == LevelSheddable:
		return "sheddable"
	}
	return "no"
}

// overloaded names the signals above their overloaded thresholds.
func (u *Utilization) overloaded(s Signals) []string {
	var why []string
	if s.sched() > u.o.SchedOverloaded {
		why = append(why, "sched")
	}
	if s.PoolWait > u.o.PoolWaitOverloaded {
		why = append(why, "pool_wait")
	}
	if s.InFlightRatio > u.o.InFlightOverloaded {
		why = append(why, "in_flight")
	}
	return why
}

// isCalm reports whether every signal is below its calm threshold.
func (u *Utilization) isCalm(s Signals) bool {
	return s.sched() < u.o.SchedCalm && s.PoolWait < u.o.PoolWaitCalm && s.InFlightRatio < u.o.InFlightCalm
}

// observe takes one sample. It escalates one level after escalateAt
// overloaded samples in a row, and restores one level after restoreAt calm
// samples with no overloaded one among them. A sample between the thresholds
// (neither overloaded nor calm) ends a run of overloaded samples and pauses a
// run of calm ones: it is not counted, but it does not start the wait for
// calm over again, as an overloaded sample does. Run calls it every Interval;
// tests call it directly.
func (u *Utilization) observe(s Signals) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last = s
	u.schedG.Set(s.SchedP99.Seconds())
	u.lagG.Set(s.SamplerLag.Seconds())
	u.poolG.Set(s.PoolWait.Seconds())
	u.inFlightG.Set(s.InFlightRatio)
	if u.onSample != nil {
		u.onSample(s)
	}
	level := u.state.Load().level
	if u.mode.Load() == protect.Off {
		u.over, u.calm = 0, 0
		if level != LevelNone {
			u.setLevel(level, LevelNone)
		}
		return
	}
	why := u.overloaded(s)
	switch {
	case len(why) > 0:
		u.over, u.calm = u.over+1, 0
	case u.isCalm(s):
		u.over, u.calm = 0, u.calm+1
	default: // between the thresholds: ends a run of overloaded samples, pauses a calm one
		u.over = 0
	}
	switch {
	case u.over >= u.escalateAt && level < LevelNormal:
		u.over = 0
		u.setLevel(level, level+1)
		u.logger.Warn("load shedder escalating: this instance is overloaded",
			u.logAttrs(level, level+1, s, strings.Join(why, ","))...)
	case u.calm >= u.restoreAt && level > LevelNone:
		u.calm = 0
		u.setLevel(level, level-1)
		u.logger.Info("load shedder restoring: this instance is calm",
			u.logAttrs(level, level-1, s, "")...)
	}
}

func (u *Utilization) setLevel(from, to int) {
	u.state.Store(u.levelState(to))
	u.levelGauge.Set(float64(to))
	if u.onChange != nil {
		u.onChange(from, to)
	}
}

func (u *Utilization) logAttrs(from, to int, s Signals, overloaded string) []any {
	attrs := []any{"shedder", string(WorkerUtilization), "mode", string(u.mode.Load()),
		"from", from, "to", to, "shedding", shedClasses(to),
		"sched_p99", s.SchedP99.String(), "sampler_lag", s.SamplerLag.String(),
		"pool_wait", s.PoolWait.String(), "in_flight_ratio", s.InFlightRatio}
	if overloaded != "" {
		attrs = append(attrs, "overloaded", overloaded)
	}
	return attrs
}
