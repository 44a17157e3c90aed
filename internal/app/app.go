// Package app is Stagedoor's composition root: New builds the whole server from
// a config.Config (its connections, services, limits, background loops and HTTP
// handler) in this one place, which `stagedoor serve`, the whole-program tests
// and every HTTP test use, so that a change to the wiring cannot pass the tests
// and break the binary. Tests change only what they must, through Options.
//
// It owns no table and no rule: it only connects the packages that do.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/boxoffice"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/httpapi"
	"github.com/stagedoor/stagedoor/internal/janitor"
	"github.com/stagedoor/stagedoor/internal/limitadmin"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/queuetoken"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/seatstream"
	"github.com/stagedoor/stagedoor/internal/shed"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// App is one Stagedoor instance: its parts, built and connected, and the HTTP
// server built from them. Its fields are for reading (tests look at the
// database and the services); Close ends it.
type App struct {
	Config      config.Config
	Logger      *slog.Logger
	DB          *pgxpool.Pool
	Redis       redis.UniversalClient
	Registry    *prometheus.Registry
	Limiter     *ratelimit.Limiter
	Auth        *auth.Service
	Settings    *limitadmin.Service // the limits' run-time settings
	Events      *event.Service
	Holds       *hold.Service
	Checkout    *checkout.Service
	Scans       *scan.Service
	BoxOffice   *boxoffice.Service // an event's orders and attendees, for its organizer
	WaitRoom    *waitroom.Service  // the on-sale waiting rooms, in Redis
	QueueTokens *queuetoken.Signer // signs the waiting room's queue tokens
	Seats       *seatstream.Hub    // the live seat maps' streams
	TicketKeys  *ticketsign.Keys   // the events' keys that sign ticket codes
	// Mail sends the outbox's e-mail (one instance at a time); without
	// STAGEDOOR_SMTP_URL it only counts what waits.
	Mail *mail.Sender
	// BuyerConcurrency and OrganizerConcurrency bound a buyer's and an
	// organizer's requests in flight at once, across instances.
	BuyerConcurrency     *concurrency.Limiter
	OrganizerConcurrency *concurrency.Limiter
	// Handler answers the HTTP API.
	Handler *httpapi.Server
	// Janitor deletes expired sessions and devices, old Idempotency-Keys,
	// long-ended holds, the scan audit's rows of no ticket and the e-mail
	// sent long ago.
	Janitor *janitor.Janitor
	// Utilization and Fleet are the shedders, asked in this order.
	Utilization *shed.Utilization
	Fleet       *shed.Fleet
	// Sessions is where what needs a PostgreSQL session of its own connects:
	// recovery's advisory lock is taken on one of its connections, and the
	// LISTEN connections are made as its are. It is DB itself, unless
	// STAGEDOOR_DIRECT_DATABASE_URL is set (DATABASE_URL is a transaction
	// pooler): then a pool of at most SessionPool connections to that URL.
	Sessions *pgxpool.Pool

	closers []func()
}

// Option changes what New builds, for tests.
type Option func(*options)

type options struct {
	db        *pgxpool.Pool
	rdb       redis.UniversalClient
	admission time.Duration
	roomClock func() time.Time
	routes    func(*echo.Echo)
}

// WithDB makes the app use db instead of opening DATABASE_URL, and not close
// it: several instances of one test share one database.
func WithDB(db *pgxpool.Pool) Option { return func(o *options) { o.db = db } }

// WithRedis makes the app use rdb instead of opening REDIS_URL, and not close
// it: a test's private redis-server, or one that is down.
func WithRedis(rdb redis.UniversalClient) Option { return func(o *options) { o.rdb = rdb } }

// WithAdmission makes waiting-room admissions last d instead of 15 minutes.
func WithAdmission(d time.Duration) Option { return func(o *options) { o.admission = d } }

// WithRoomClock sets the clock that ages the waiting room's progress on this
// instance (waitroom.Options.Clock): tests move it on by hand.
func WithRoomClock(clock func() time.Time) Option { return func(o *options) { o.roomClock = clock } }

// WithRoutes adds routes behind the same rings as the API's: tests add slow,
// failing and panicking ones.
func WithRoutes(add func(*echo.Echo)) Option { return func(o *options) { o.routes = add } }

// SessionPool is the most connections of Sessions when it is a pool of its
// own: recovery holds one during a pass; the listeners connect outside it.
const SessionPool = 2

// settingsStartTimeout bounds reading the limits' stored settings at start.
const settingsStartTimeout = 10 * time.Second

// New builds an instance from cfg. It does not migrate the database (serve
// does that first) and starts no background loop (Start does). It fails when
// PostgreSQL or Redis cannot be opened, or when the limits' stored settings
// cannot be read: an instance that ignored an operator's kill switch must not
// start.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts ...Option) (a *App, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a = &App{Config: cfg, Logger: logger, DB: o.db, Redis: o.rdb}
	built := a // a is nil once a failure is returned
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	if a.DB == nil {
		open := conn.Postgres
		if cfg.Pooled() {
			open = conn.PostgresPooler
		}
		if a.DB, err = open(ctx, cfg.DatabaseURL, cfg.DBPool); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, a.DB.Close)
	}
	a.Sessions = a.DB
	if cfg.Pooled() {
		if a.Sessions, err = conn.PostgresSessions(ctx, cfg.DirectDatabaseURL, SessionPool); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, a.Sessions.Close)
	}
	if a.Redis == nil {
		if a.Redis, err = conn.Redis(ctx, cfg.RedisURL, logger); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func() { a.Redis.Close() })
	}

	a.Registry = prometheus.NewRegistry()
	metrics.Register(a.Registry, collectors.NewGoCollector())
	metrics.Register(a.Registry, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Each Redis node gets a breaker of its own (conn.NodeOf), so that a dead
	// master of a cluster costs only the buckets and rooms it serves.
	nodeOf := func(ctx context.Context, key string) string { return conn.NodeOf(ctx, a.Redis, key) }
	_, cluster := a.Redis.(*conn.ClusterClient)
	a.Limiter = ratelimit.New(a.Redis, ratelimit.Options{
		Prefix:      cfg.RedisPrefix,
		Timeout:     cfg.RedisTimeout,
		Registerer:  a.Registry,
		Limits:      cfg.LimitDefinitions(),
		SplitBySlot: cluster,
		NodeOf:      nodeOf,
		Logger:      logger,
	})
	concurrent := func(name ratelimit.Name, max int) *concurrency.Limiter {
		return concurrency.New(a.Redis, concurrency.Options{Name: name, Max: max, Prefix: cfg.RedisPrefix, Tag: limits.Of(name).Tag,
			Timeout: cfg.RedisTimeout, NodeOf: nodeOf, Registerer: a.Registry, Logger: logger})
	}
	// A buyer's leases share the slot of her hold-buyer bucket (limits.BuyerTag),
	// so that a hold takes both in one script.
	a.BuyerConcurrency = concurrent(limits.BuyerConcurrency, cfg.BuyerConcurrency)
	a.OrganizerConcurrency = concurrent(limits.OrganizerConcurrency, cfg.OrganizerConcurrency)
	a.Utilization, a.Fleet = a.shedders(cfg, logger, nodeOf)
	a.Settings = limitadmin.New(a.DB, a.Limiter, limitadmin.Options{Registerer: a.Registry, Logger: logger, Sessions: a.Sessions,
		Switches: a.switches(cfg)})
	startCtx, cancel := context.WithTimeout(ctx, settingsStartTimeout)
	defer cancel()
	if err := a.Settings.Start(startCtx, cfg.LimitDefinitions()); err != nil {
		return nil, fmt.Errorf("limit settings: %w", err)
	}

	a.Events = event.NewService(a.DB, hold.CreateSeats)
	a.Auth = auth.NewService(a.DB, cfg.BcryptCost).WithSessions(a.Sessions).WithEvents(a.Events)
	a.Holds = hold.NewService(a.DB, a.Events, cfg.HoldTTL, cfg.MaxHeldSeats).WithReholdCooldown(cfg.ReholdCooldown)
	a.TicketKeys = ticketsign.NewKeys(a.DB)
	a.Checkout = checkout.NewService(a.DB,
		checkout.NewPayments(checkout.PaymentsOptions{BaseURL: cfg.PayrailURL, APIKey: cfg.PayrailAPIKey, Timeout: cfg.PaymentTimeout,
			BreakerBuyers: cfg.BreakerBuyers}),
		checkout.Options{RecoverAfter: cfg.RecoveryAfter, Logger: logger, Registerer: a.Registry, TicketKeys: a.TicketKeys,
			Sessions: a.Sessions, Events: a.Events})
	a.Scans = scan.NewService(a.DB, a.TicketKeys)
	a.BoxOffice = boxoffice.New(a.Events, a.Checkout, a.Scans, a.Auth, a.Holds)
	a.WaitRoom = waitroom.New(a.Redis, waitroom.Options{Prefix: cfg.RedisPrefix, Timeout: cfg.RedisTimeout,
		Admission: o.admission, Logger: logger, NodeOf: nodeOf, Registerer: a.Registry, Clock: o.roomClock})
	a.QueueTokens = queuetoken.New(a.DB, 0, nil)
	a.Seats = seatstream.New(a.Events, seatstream.Options{Registerer: a.Registry})
	a.closers = append(a.closers, a.Seats.Close)
	if a.Mail, err = mail.NewSender(a.DB, mail.Options{SMTPURL: cfg.SMTPURL, From: cfg.MailFrom, PublicURL: cfg.PublicURL,
		Sessions: a.Sessions, Logger: logger, Registerer: a.Registry}); err != nil {
		return nil, err
	}
	a.Janitor = janitor.New([]janitor.Task{
		{Name: "sessions_and_devices", Purge: a.Auth.PurgeExpired},
		{Name: "idempotency_keys", Purge: a.Checkout.PurgeKeys},
		{Name: "holds", Purge: a.Holds.PurgeEnded},
		{Name: "scans_of_no_ticket", Purge: a.Scans.PurgeJunk},
		{Name: "mail_sent", Purge: a.Mail.PurgeSent},
	}, janitor.DefaultBatch, logger, a.Registry)
	a.Handler = httpapi.New(a.deps(o.routes))
	return a, nil
}

// deps are what the HTTP server is built from: the services, and probes of
// the stores rather than the pools themselves.
func (a *App) deps(routes func(*echo.Echo)) httpapi.Deps {
	probes := httpapi.Probes{Postgres: a.DB.Ping, Redis: func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() }}
	if cluster, ok := a.Redis.(*conn.ClusterClient); ok {
		probes = httpapi.Probes{Postgres: a.DB.Ping, Cluster: cluster.Health}
	}
	return httpapi.Deps{
		Config: a.Config, Logger: a.Logger, Registry: a.Registry, Limiter: a.Limiter, Auth: a.Auth,
		Settings: a.Settings, Events: a.Events, Holds: a.Holds, Checkout: a.Checkout, Scans: a.Scans, BoxOffice: a.BoxOffice,
		WaitRoom: a.WaitRoom, QueueTokens: a.QueueTokens, Seats: a.Seats, TicketKeys: a.TicketKeys,
		BuyerConcurrency: a.BuyerConcurrency, OrganizerConcurrency: a.OrganizerConcurrency,
		Shedders: []shed.Shedder{a.Utilization, a.Fleet},
		Probes:   probes,
		Routes:   routes,
	}
}

// switches are the admin API's switches: every lease and shedder of the
// registry (internal/limits), in its order, each with what it switches.
func (a *App) switches(cfg config.Config) []limitadmin.Switch {
	moders := map[ratelimit.Name]limitadmin.Moder{
		limits.BuyerConcurrency: a.BuyerConcurrency, limits.OrganizerConcurrency: a.OrganizerConcurrency,
		limits.FleetUsage: a.Fleet, limits.WorkerUtilization: a.Utilization,
	}
	maxInFlight := map[ratelimit.Name]int{
		limits.BuyerConcurrency: cfg.BuyerConcurrency, limits.OrganizerConcurrency: cfg.OrganizerConcurrency,
	}
	var out []limitadmin.Switch
	for _, p := range limits.All {
		if p.Mode == "" || p.Kind == limits.Bucket {
			continue
		}
		m, ok := moders[p.Name]
		if !ok {
			panic("app: no switch built for " + string(p.Name))
		}
		out = append(out, limitadmin.Switch{Kind: p.Kind, Of: m, MaxInFlight: maxInFlight[p.Name]})
	}
	return out
}

// shedders builds the worker utilization shedder (its signals: the Go
// scheduler's latency, the database pool's waits, this instance's requests in
// flight) and the fleet usage shedder (off when STAGEDOOR_FLEET_CAPACITY is
// unset).
func (a *App) shedders(cfg config.Config, logger *slog.Logger, nodeOf func(context.Context, string) string) (*shed.Utilization, *shed.Fleet) {
	util := shed.NewUtilization(shed.UtilizationOptions{
		PoolWait: func() (int64, time.Duration) {
			st := a.DB.Stat()
			return st.EmptyAcquireCount(), st.EmptyAcquireWaitTime()
		},
		InFlight:   func() (int, int) { return a.Handler.InFlight() },
		Registerer: a.Registry,
		Logger:     logger,
		Mode:       cfg.WorkerUtilization,
	})
	mode := ratelimit.Enforce
	if cfg.FleetCapacity == 0 {
		mode = ratelimit.Off // no capacity to share: nothing to decide
	}
	fleet := shed.NewFleet(a.Redis, shed.FleetOptions{Capacity: cfg.FleetCapacity, Reserve: cfg.FleetReserve,
		Prefix: cfg.RedisPrefix, Timeout: cfg.RedisTimeout, NodeOf: nodeOf, Registerer: a.Registry,
		Logger: logger, Mode: mode})
	return util, fleet
}

// Loops name the background loops of an instance.
type Loops uint16

// The loops; serve runs All.
const (
	// SettingsWatcher keeps the limits' settings in step with every other
	// instance (LISTEN/NOTIFY and a re-read every second).
	SettingsWatcher Loops = 1 << iota
	// HoldSweeper marks expired holds expired, every hold.DefaultSweepEvery.
	HoldSweeper
	// Recovery settles orders left pending and reconciles Payrail's charges.
	Recovery
	// Refunds sends pending refunds to Payrail again and refunds the orders
	// of cancelled events (checkout.RunRefunds), every second.
	Refunds
	// Janitor deletes what is no longer needed, every janitor.DefaultEvery.
	Janitor
	// CredentialWatcher hears every instance's logouts and scanner-key
	// revocations, so that this one forgets them at once (auth.Service.Watch).
	CredentialWatcher
	// LeaseRenewer renews the concurrency leases of long requests, so that
	// only a dead instance's leases lapse.
	LeaseRenewer
	// Shedding samples the worker utilization shedder's signals, and
	// exchanges this instance's rates by class with the fleet's in Redis.
	Shedding
	// Mail sends the outbox's due messages, every mail.DefaultEvery, on one
	// instance at a time.
	Mail
	All = SettingsWatcher | HoldSweeper | Recovery | Refunds | Janitor | CredentialWatcher | LeaseRenewer | Shedding | Mail
)

// Start runs the loops in the background until the returned stop is called;
// stop waits for them to return. They outlive ctx (SIGTERM), so that they go on
// while the requests in flight finish: serve stops them after the last one.
func (a *App) Start(ctx context.Context, loops Loops) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if loops&SettingsWatcher != 0 {
		wg.Go(func() { a.Settings.Run(ctx) })
	}
	if loops&HoldSweeper != 0 {
		wg.Go(func() { a.Holds.RunSweeper(ctx, hold.DefaultSweepEvery, a.Logger) })
	}
	if loops&Recovery != 0 {
		wg.Go(func() { a.Checkout.RunRecovery(ctx) })
	}
	if loops&Refunds != 0 {
		wg.Go(func() { a.Checkout.RunRefunds(ctx, checkout.DefaultRefundEvery) })
	}
	if loops&CredentialWatcher != 0 {
		wg.Go(func() { a.Auth.Watch(ctx, a.Logger) })
	}
	if loops&LeaseRenewer != 0 {
		wg.Go(func() { a.BuyerConcurrency.Run(ctx) })
		wg.Go(func() { a.OrganizerConcurrency.Run(ctx) })
	}
	if loops&Shedding != 0 {
		wg.Go(func() { a.Utilization.Run(ctx) })
		wg.Go(func() { a.Fleet.Run(ctx) })
	}
	if loops&Janitor != 0 {
		wg.Go(func() { a.Janitor.Run(ctx, janitor.DefaultEvery) })
	}
	if loops&Mail != 0 {
		wg.Go(func() { a.Mail.Run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// Close closes what New opened (not what Options gave it), last opened first.
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
