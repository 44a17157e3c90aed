// Package limitadmin keeps the limits' run-time settings (rate, period, burst and
// mode) in PostgreSQL and this instance's Limiter in step with them.
//
// At start (Start) each limit without a stored row gets one from the
// environment's definition, and the stored settings are applied: a stored
// setting wins over the environment from then on. An Update writes a limit's row
// and sends NOTIFY stagedoor_limit_settings in the same transaction. Run listens
// for those notifications on a connection of its own, outside the pool, and also
// re-reads every setting each PollInterval (1 s), in case a notification is
// missed or the listening connection is down; so every instance applies a change
// within about a second, two at most. A setting is applied only when it differs
// from the one in force, since applying one clears that limit's denial cache.
//
//	admin := limitadmin.New(db, limiter, limitadmin.Options{Registerer: reg, Logger: logger})
//	if err := admin.Start(ctx, cfg.LimitDefinitions()); err != nil { ... }
//	go admin.Run(ctx)
//	s, err := admin.Update(ctx, "login-address", limitadmin.Change{Mode: "off"},
//		limitadmin.Actor{Principal: "admin", RequestID: "4f1c", Address: "10.0.0.7"})
//
// After the Update, s.Setting is login-address's stored bucket in mode off, and
// every instance stops evaluating login-address within 2 seconds.
//
// It owns the limit_settings table. It changes the Limiter only through
// SetSetting, and never touches Redis.
package limitadmin

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// Bounds of a Change, beyond which a value is surely a mistake. The Limiter's
// own rules (at most one token a microsecond, a year at most to fill an empty
// bucket) apply as well.
const (
	MaxRate     = 1_000_000_000
	MaxBurst    = 1_000_000_000
	MaxPeriodMS = int64(366 * 24 * time.Hour / time.Millisecond) // a year
)

// Stored is a limit's setting as stored, with who changed it last and when.
type Stored struct {
	Name ratelimit.Name
	Kind Kind
	// Setting is a bucket's limit and mode; of a switch, only the Mode.
	Setting     ratelimit.Setting
	MaxInFlight int // a concurrency limit's maximum (not stored: from the environment)
	UpdatedAt   time.Time
	UpdatedBy   string // "environment" until an admin changes it
}

// Change is what an admin asks of a limit. Mode is required; a nil field keeps
// the stored value (so a new Rate alone keeps the stored Burst).
type Change struct {
	Mode     string // "enforce", "shadow" or "off"
	Rate     *int
	PeriodMS *int64
	Burst    *int
}

// Actor is who asks for a change, for the log and the row's updated_by.
type Actor struct {
	Principal string // such as "admin"
	RequestID string
	Address   string // the client's address
}

// String writes the actor such as "admin (request 4f1c from 10.0.0.7)".
func (a Actor) String() string {
	return fmt.Sprintf("%s (request %s from %s)", a.Principal, a.RequestID, a.Address)
}

// Options configure a Service. All are optional.
type Options struct {
	// PollInterval is how often Run re-reads every setting; default 1 s.
	PollInterval time.Duration
	// Registerer receives stagedoor_ratelimit_setting{limit,mode} and
	// stagedoor_ratelimit_default{limit,mode}; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives the changes and the listener's troubles; default slog.Default().
	Logger *slog.Logger
	// Switches are the protections besides the Limiter's buckets whose modes
	// the Service stores and applies: the concurrency limits and the shedders.
	Switches []Switch
	// Sessions, when set, is the pool whose connections Run's listening
	// connection is made as, instead of db's: PostgreSQL itself, when db's URL
	// is a transaction pooler, on which a LISTEN would not outlast its
	// transaction.
	Sessions *pgxpool.Pool
}

// Service stores the limits' settings and applies them to one Limiter. Safe for
// concurrent use.
type Service struct {
	store    store
	limiter  *ratelimit.Limiter
	logger   *slog.Logger
	gauge    *prometheus.GaugeVec // the mode in force
	defaults *prometheus.GaugeVec // the mode by the environment
	listenTo *pgx.ConnConfig
	poll     time.Duration

	switches []Switch                  // in the order of Options.Switches
	byName   map[ratelimit.Name]Switch // the same, by name

	mu  sync.Mutex                           // one refresh at a time, so the newest read is applied last
	bad map[ratelimit.Name]ratelimit.Setting // stored settings the Limiter refused, logged once
}

// New returns a Service on db for limiter. Nothing is read until Start.
func New(db *pgxpool.Pool, limiter *ratelimit.Limiter, opts Options) *Service {
	sessions := db
	if opts.Sessions != nil {
		sessions = opts.Sessions
	}
	listenTo := sessions.Config().ConnConfig // a copy
	if listenTo.RuntimeParams == nil {
		listenTo.RuntimeParams = map[string]string{}
	}
	listenTo.RuntimeParams["application_name"] = listenerName
	s := &Service{
		store:    store{db: db},
		limiter:  limiter,
		logger:   opts.Logger,
		gauge:    settingGauge(opts.Registerer),
		defaults: defaultGauge(opts.Registerer),
		listenTo: listenTo,
		poll:     opts.PollInterval,
		bad:      map[ratelimit.Name]ratelimit.Setting{},
		switches: opts.Switches,
		byName:   make(map[ratelimit.Name]Switch, len(opts.Switches)),
	}
	for _, sw := range opts.Switches {
		s.byName[sw.Of.Name()] = sw
		s.setGauge(sw.Of.Name(), sw.Of.Mode())
		setModeGauge(s.defaults, sw.Of.Name(), sw.Of.Mode())
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.poll <= 0 {
		s.poll = time.Second
	}
	for _, name := range limiter.Names() {
		in, _ := limiter.Setting(name)
		s.setGauge(name, in.Mode)
		setModeGauge(s.defaults, name, in.Mode)
	}
	return s
}

// Start stores the setting of each definition and the mode of each switch
// that has no stored row yet (the environment's values, at the first start),
// then applies the stored settings to the Limiter and the switches. Call it
// before serving.
func (s *Service) Start(ctx context.Context, defaults []ratelimit.Definition) error {
	if err := s.store.seed(ctx, defaults, s.switches); err != nil {
		return err
	}
	return s.refresh(ctx)
}

// List returns the stored setting of every limit, in the Limiter's order, then
// of every switch, in the order of Options.Switches. A limit with no row yet is
// shown with the setting in force.
func (s *Service) List(ctx context.Context) ([]Stored, error) {
	stored, err := s.store.list(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[ratelimit.Name]Stored, len(stored))
	for _, st := range stored {
		byName[st.Name] = st
	}
	out := make([]Stored, 0, len(stored))
	for _, name := range s.limiter.Names() {
		st, ok := byName[name]
		if !ok || st.Kind != limits.Bucket {
			in, _ := s.limiter.Setting(name)
			st = Stored{Name: name, Setting: in, UpdatedBy: fromEnvironment}
		}
		st.Kind = limits.Bucket
		out = append(out, st)
	}
	for _, sw := range s.switches {
		name := sw.Of.Name()
		st, ok := byName[name]
		if !ok {
			st = Stored{Name: name, Setting: switchSetting(sw.Of.Mode()), UpdatedBy: fromEnvironment}
		}
		st.Kind, st.Setting.Limit, st.MaxInFlight = sw.Kind, ratelimit.Limit{}, sw.MaxInFlight
		out = append(out, st)
	}
	return out, nil
}

// Update stores change for the named limit, applies it on this instance at once
// and announces it to the others, and returns the new stored setting. It returns
// an errkind.NotFound error for a name that is no limit, or an errkind.Invalid
// error naming the field for a bad change; nothing is changed then.
func (s *Service) Update(ctx context.Context, name ratelimit.Name, change Change, by Actor) (Stored, error) {
	if sw, ok := s.byName[name]; ok {
		return s.updateSwitch(ctx, sw, change, by)
	}
	inForce, ok := s.limiter.Setting(name)
	if !ok {
		return Stored{}, errkind.NotFoundf("there is no limit named %q", name)
	}
	if err := change.check(); err != nil {
		return Stored{}, err // bad on its own: no need to ask the database
	}
	old, next, err := s.store.update(ctx, name, inForce, change.apply, by.String())
	if err != nil {
		return Stored{}, err
	}
	next.Kind = limits.Bucket
	return next, s.changed(ctx, name, old, next, by)
}

// updateSwitch is Update of a switch: only its mode.
func (s *Service) updateSwitch(ctx context.Context, sw Switch, change Change, by Actor) (Stored, error) {
	name := sw.Of.Name()
	if change.Rate != nil || change.PeriodMS != nil || change.Burst != nil {
		return Stored{}, invalid("%s is a %s, not a token bucket: only its mode can be set", name, describe(sw.Kind))
	}
	if err := change.check(); err != nil {
		return Stored{}, err
	}
	old, next, err := s.store.update(ctx, name, switchSetting(sw.Of.Mode()), func(ratelimit.Setting) (ratelimit.Setting, error) {
		return switchSetting(ratelimit.Mode(change.Mode)), nil
	}, by.String())
	if err != nil {
		return Stored{}, err
	}
	next.Kind, next.MaxInFlight = sw.Kind, sw.MaxInFlight
	return next, s.changed(ctx, name, old, next, by)
}

// changed logs a stored change and applies it here at once. An error to
// apply it is logged, not returned: the change is stored and announced, and Run
// applies it at its next re-read.
func (s *Service) changed(ctx context.Context, name ratelimit.Name, old, next Stored, by Actor) error {
	s.logger.Info("limit setting changed",
		"limit", name, "old", text(old.Setting), "new", text(next.Setting),
		slog.Group("by", "principal", by.Principal, "request_id", by.RequestID, "client", by.Address))
	if err := s.refresh(ctx); err != nil {
		s.logger.Warn("limit setting stored but not yet applied here", "limit", name, "error", err)
	}
	return nil
}

// text is a setting for the log: a bucket's such as "10/1m enforce", a
// switch's its mode.
func text(s ratelimit.Setting) string {
	if s.Limit == (ratelimit.Limit{}) {
		return string(s.Mode)
	}
	return s.String()
}

func describe(k Kind) string {
	if k == limits.Lease {
		return "concurrency limit"
	}
	return "load shedder"
}

// check reports a missing mode or a field out of range, whatever is stored.
func (c Change) check() error {
	switch {
	case c.Mode == "":
		return invalid("mode is required: enforce, shadow or off")
	case c.Rate != nil && (*c.Rate < 1 || *c.Rate > MaxRate):
		return invalid("rate must be a whole number from 1 to %d", MaxRate)
	case c.PeriodMS != nil && (*c.PeriodMS < 1 || *c.PeriodMS > MaxPeriodMS):
		return invalid("period_ms must be a whole number from 1 to %d (a year)", MaxPeriodMS)
	case c.Burst != nil && (*c.Burst < 1 || *c.Burst > MaxBurst):
		return invalid("burst must be a whole number from 1 to %d", MaxBurst)
	}
	if _, err := ratelimit.ParseMode(c.Mode); err != nil {
		return invalid("mode %q is not enforce, shadow or off", c.Mode)
	}
	return nil
}

// apply returns the setting that change makes of old, or an error wrapping
// errkind.Invalid that names the field.
func (c Change) apply(old ratelimit.Setting) (ratelimit.Setting, error) {
	if err := c.check(); err != nil {
		return ratelimit.Setting{}, err
	}
	l := old.Limit
	if c.Rate != nil {
		l.Rate = *c.Rate
	}
	if c.PeriodMS != nil {
		l.Period = time.Duration(*c.PeriodMS) * time.Millisecond
	}
	if c.Burst != nil {
		l.Burst = *c.Burst
	}
	if err := l.Validate(); err != nil {
		return ratelimit.Setting{}, invalid("%s (rate %d, period_ms %d, burst %d)", err, l.Rate, l.Period.Milliseconds(), l.Burst)
	}
	return ratelimit.Setting{Limit: l, Mode: ratelimit.Mode(c.Mode)}, nil
}

func invalid(format string, args ...any) error {
	return errkind.Invalidf(format, args...)
}
