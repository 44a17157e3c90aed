// Package config reads Stagedoor's one Config from the environment. Every
// variable has a default; a bad value is an *Error that names the variable, and
// the program stops with exit code 2.
//
// It owns no state and does no I/O beyond reading the environment; the
// protections' variables and defaults are declared in internal/limits, the
// registry, and read here; the mail settings are checked by internal/mail's
// own parsers, the ones its Sender uses.
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/mail"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// Config is everything Stagedoor reads from its environment.
type Config struct {
	Addr            string        // STAGEDOOR_ADDR: where serve listens
	MetricsAddr     string        // STAGEDOOR_METRICS_ADDR: where serve answers GET /metrics, apart from the API
	DatabaseURL     string        // DATABASE_URL
	DBPool          int           // STAGEDOOR_DB_POOL: PostgreSQL connections per instance
	AutoMigrate     bool          // STAGEDOOR_AUTO_MIGRATE: serve applies migrations first
	RedisURL        string        // REDIS_URL: one URL, or comma-separated host:port for a Cluster
	RedisPrefix     string        // STAGEDOOR_REDIS_PREFIX: put before every Redis key
	RedisTimeout    time.Duration // STAGEDOOR_REDIS_TIMEOUT: deadline of one limiter call
	PayrailURL      string        // PAYRAIL_URL: where Stagedoor finds Payrail
	PaymentTimeout  time.Duration // STAGEDOOR_PAYMENT_TIMEOUT: deadline of one charge
	BreakerBuyers   int           // STAGEDOOR_PAYMENT_BREAKER_BUYERS: buyers paying within 10 s before the payment breaker may open
	PayrailAddr     string        // PAYRAIL_ADDR: where "stagedoor payrail" listens
	PayrailDatabase string        // PAYRAIL_DATABASE_URL: the stub's ledger (default: DATABASE_URL)
	PayrailLatency  time.Duration // PAYRAIL_LATENCY: the stub's delay per charge
	PayrailJitter   time.Duration // PAYRAIL_LATENCY_JITTER: up to this much more, at random
	PayrailFailures float64       // PAYRAIL_FAILURE_RATE: the stub's share of 500s
	PayrailRecord   time.Duration // PAYRAIL_RECORD_DELAY: charges recorded up to this late, at random
	PayrailAPIKey   string        // PAYRAIL_API_KEY: Payrail's API key; Stagedoor sends it, "stagedoor payrail" requires it
	AdminToken      string        // STAGEDOOR_ADMIN_TOKEN: empty turns the admin API off
	BcryptCost      int           // STAGEDOOR_BCRYPT_COST
	TrustedProxies  []netip.Prefix
	MaxInFlight     int           // STAGEDOOR_MAX_IN_FLIGHT: requests at once per instance
	CheckoutSlots   int           // STAGEDOOR_CHECKOUT_SLOTS: checkouts at once per instance
	MaxStreams      int           // STAGEDOOR_MAX_STREAMS: live seat-map streams at once per instance
	MaxConnections  int           // STAGEDOOR_MAX_CONNECTIONS: client connections open at once per instance
	WriteTimeout    time.Duration // STAGEDOOR_WRITE_TIMEOUT: how long one write may wait for the client to read
	HoldTTL         time.Duration // STAGEDOOR_HOLD_TTL
	RecoveryAfter   time.Duration // STAGEDOOR_RECOVERY_AFTER: age of a pending order to settle
	ShutdownTimeout time.Duration // STAGEDOOR_SHUTDOWN_TIMEOUT: how long SIGTERM waits for requests
	BodyTimeout     time.Duration // STAGEDOOR_BODY_TIMEOUT: how long a request's body may take to arrive
	MaxHeldSeats    int           // STAGEDOOR_MAX_HELD_SEATS: seats one buyer may hold at once in one event
	ReholdCooldown  time.Duration // STAGEDOOR_REHOLD_COOLDOWN: how long a buyer may not hold again seats their hold gave back; 0: off
	LogLevel        string        // STAGEDOOR_LOG_LEVEL: debug, info, warn or error
	// LogFormat is STAGEDOOR_LOG_FORMAT: json (a line of JSON an event, for
	// machines), text (a short line of text, for a person: internal/textlog)
	// or auto, text when standard error is a terminal and JSON otherwise.
	LogFormat string

	// SMTPURL is the mail server (STAGEDOOR_SMTP_URL: smtp:// or smtps://,
	// maybe with a login whose password it holds: never log it; the
	// mail.Server read from it hides the password); empty: notices stay in
	// the outbox, unsent.
	SMTPURL   string
	MailFrom  string // STAGEDOOR_MAIL_FROM: the messages' From
	PublicURL string // STAGEDOOR_PUBLIC_URL: where the messages' links lead

	// DirectDatabaseURL is PostgreSQL itself, when DATABASE_URL is a
	// transaction pooler such as PgBouncer (STAGEDOOR_DIRECT_DATABASE_URL);
	// empty when it is not.
	DirectDatabaseURL string

	BuyerConcurrency     int     // STAGEDOOR_LIMIT_BUYER_CONCURRENCY: a buyer's requests in flight at once
	OrganizerConcurrency int     // STAGEDOOR_LIMIT_ORGANIZER_CONCURRENCY: an organizer's requests in flight at once
	FleetCapacity        int     // STAGEDOOR_FLEET_CAPACITY: the fleet's requests per second; 0: fleet-usage off
	FleetReserve         float64 // STAGEDOOR_FLEET_RESERVE: the share of it kept for critical requests
	// WorkerUtilization is the worker utilization shedder's mode at the first
	// start (STAGEDOOR_WORKER_UTILIZATION: enforce, shadow or off); the stored
	// setting wins after, as for the limits.
	WorkerUtilization ratelimit.Mode

	// Limits holds the starting setting of each limit of internal/limits, from
	// its variable.
	Limits map[ratelimit.Name]ratelimit.Limit
}

// LimitDefinitions are the limiter's definitions of every limit, each starting
// in enforce mode at the rate of its variable.
func (c Config) LimitDefinitions() []ratelimit.Definition {
	buckets := limits.OfKind(limits.Bucket)
	defs := make([]ratelimit.Definition, 0, len(buckets))
	for _, p := range buckets {
		defs = append(defs, ratelimit.Definition{
			Name:    p.Name,
			Setting: ratelimit.Setting{Limit: c.Limits[p.Name], Mode: p.Mode},
			Policy:  p.Policy(),
			Tag:     p.Tag,
		})
	}
	return defs
}

// Pooled reports whether DATABASE_URL is a transaction pooler (PgBouncer with
// pool_mode=transaction): STAGEDOOR_DIRECT_DATABASE_URL is set. Then no
// statement is prepared on DATABASE_URL's connections to be used again, and
// what needs a session of its own goes to SessionDatabaseURL.
func (c Config) Pooled() bool { return c.DirectDatabaseURL != "" }

// SessionDatabaseURL is where what needs a PostgreSQL session of its own
// connects: the migrations and their lock, the LISTEN connections, recovery's
// advisory lock. STAGEDOOR_DIRECT_DATABASE_URL when set, else DATABASE_URL.
func (c Config) SessionDatabaseURL() string {
	if c.Pooled() {
		return c.DirectDatabaseURL
	}
	return c.DatabaseURL
}

// Error says which variable is wrong and why.
type Error struct {
	Variable string
	Value    string
	Problem  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s=%q: %s", e.Variable, e.Value, e.Problem)
}

// Load reads the Config through getenv (os.Getenv in production). It returns
// every bad variable at once, each as an *Error, joined.
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		Addr:            r.checked("STAGEDOOR_ADDR", ":8080", listenAddrProblem),
		MetricsAddr:     r.checked("STAGEDOOR_METRICS_ADDR", "127.0.0.1:9091", listenAddrProblem),
		DatabaseURL:     r.checked("DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/stagedoor?sslmode=disable", postgresURLProblem),
		DBPool:          r.integer("STAGEDOOR_DB_POOL", 24, 2, 1000),
		AutoMigrate:     r.boolean("STAGEDOOR_AUTO_MIGRATE", true),
		RedisURL:        r.checked("REDIS_URL", "redis://127.0.0.1:6379/0", redisURLProblem),
		RedisPrefix:     r.str("STAGEDOOR_REDIS_PREFIX", "sd:"),
		RedisTimeout:    r.duration("STAGEDOOR_REDIS_TIMEOUT", 50*time.Millisecond),
		PayrailURL:      r.checked("PAYRAIL_URL", "http://127.0.0.1:8090", httpURLProblem),
		PaymentTimeout:  r.duration("STAGEDOOR_PAYMENT_TIMEOUT", 5*time.Second),
		BreakerBuyers:   r.protection(limits.PaymentBreaker, 3, 1_000_000),
		PayrailAddr:     r.checked("PAYRAIL_ADDR", "127.0.0.1:8090", listenAddrProblem),
		PayrailLatency:  r.duration("PAYRAIL_LATENCY", 400*time.Millisecond),
		PayrailJitter:   r.durationOrZero("PAYRAIL_LATENCY_JITTER", 0),
		PayrailFailures: r.fraction("PAYRAIL_FAILURE_RATE", 0),
		PayrailRecord:   r.durationOrZero("PAYRAIL_RECORD_DELAY", 0),
		PayrailAPIKey:   r.str("PAYRAIL_API_KEY", ""),
		AdminToken:      r.str("STAGEDOOR_ADMIN_TOKEN", ""),
		BcryptCost:      r.integer("STAGEDOOR_BCRYPT_COST", 12, 4, 31),
		TrustedProxies:  r.prefixes("STAGEDOOR_TRUSTED_PROXIES"),
		MaxInFlight:     r.protection(limits.InFlight, 1, 1_000_000),
		CheckoutSlots:   r.protection(limits.CheckoutSlots, 1, 1000),
		MaxStreams:      r.protection(limits.Streams, 1, 1_000_000),
		MaxConnections:  r.protection(limits.Connections, 2, 1_000_000),
		WriteTimeout:    r.duration("STAGEDOOR_WRITE_TIMEOUT", 10*time.Second),
		HoldTTL:         r.duration("STAGEDOOR_HOLD_TTL", 10*time.Minute),
		RecoveryAfter:   r.duration("STAGEDOOR_RECOVERY_AFTER", time.Minute),
		ShutdownTimeout: r.duration("STAGEDOOR_SHUTDOWN_TIMEOUT", 20*time.Second),
		BodyTimeout:     r.duration("STAGEDOOR_BODY_TIMEOUT", 5*time.Second),
		MaxHeldSeats:    r.integer("STAGEDOOR_MAX_HELD_SEATS", 10, 1, 10_000),
		ReholdCooldown:  r.durationOrZero("STAGEDOOR_REHOLD_COOLDOWN", time.Minute),
		LogLevel:        r.oneOf("STAGEDOOR_LOG_LEVEL", "info", "debug", "info", "warn", "error"),
		LogFormat:       r.oneOf("STAGEDOOR_LOG_FORMAT", "auto", "auto", "json", "text"),
		SMTPURL:         r.checked("STAGEDOOR_SMTP_URL", "", problemOf(func(v string) error { _, err := mail.ParseServerURL(v); return err })),
		MailFrom:        r.checked("STAGEDOOR_MAIL_FROM", DefaultMailFrom, problemOf(func(v string) error { _, err := mail.ParseFrom(v); return err })),
		PublicURL:       r.checked("STAGEDOOR_PUBLIC_URL", DefaultPublicURL, problemOf(mail.CheckPublicURL)),

		BuyerConcurrency:     r.protection(limits.BuyerConcurrency, 1, 10_000),
		OrganizerConcurrency: r.protection(limits.OrganizerConcurrency, 1, 10_000),
		FleetCapacity:        r.protection(limits.FleetUsage, 0, 100_000_000),
		FleetReserve:         r.fraction("STAGEDOOR_FLEET_RESERVE", 0.2),
		WorkerUtilization:    r.mode(limits.WorkerUtilization),
		Limits:               map[ratelimit.Name]ratelimit.Limit{},
	}
	c.PayrailDatabase = r.checked("PAYRAIL_DATABASE_URL", c.DatabaseURL, postgresURLProblem)
	c.DirectDatabaseURL = r.checked("STAGEDOOR_DIRECT_DATABASE_URL", "", postgresURLProblem)
	for _, p := range limits.OfKind(limits.Bucket) {
		c.Limits[p.Name] = r.limit(p.Variable, p.Default)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		r.fail("STAGEDOOR_ADMIN_TOKEN", "(hidden)", "must be at least 16 characters")
	}
	if c.PayrailAPIKey != "" && !visibleASCII(c.PayrailAPIKey, 16, 256) {
		r.fail("PAYRAIL_API_KEY", "(hidden)", "must be 16 to 256 visible ASCII characters")
	}
	if c.CheckoutSlots >= c.DBPool && r.ok("STAGEDOOR_CHECKOUT_SLOTS") && r.ok("STAGEDOOR_DB_POOL") {
		r.fail("STAGEDOOR_CHECKOUT_SLOTS", strconv.Itoa(c.CheckoutSlots),
			fmt.Sprintf("must be less than STAGEDOOR_DB_POOL (%d), so that holds and seat maps keep connections of their own", c.DBPool))
	}
	if c.MaxConnections <= c.MaxStreams && r.ok("STAGEDOOR_MAX_CONNECTIONS") && r.ok("STAGEDOOR_MAX_STREAMS") {
		r.fail("STAGEDOOR_MAX_CONNECTIONS", strconv.Itoa(c.MaxConnections),
			fmt.Sprintf("must be more than STAGEDOOR_MAX_STREAMS (%d): each live seat map holds a connection, and requests need some of their own", c.MaxStreams))
	}
	if c.RecoveryAfter < RecoveryMargin*c.PaymentTimeout && r.ok("STAGEDOOR_RECOVERY_AFTER") && r.ok("STAGEDOOR_PAYMENT_TIMEOUT") {
		r.fail("STAGEDOOR_RECOVERY_AFTER", c.RecoveryAfter.String(),
			fmt.Sprintf("must be at least %d × STAGEDOOR_PAYMENT_TIMEOUT (%s), so that recovery never settles an order whose charge may still be under way",
				RecoveryMargin, c.PaymentTimeout))
	}
	return c, errors.Join(r.errs...)
}

// The messages' From and links when STAGEDOOR_MAIL_FROM and
// STAGEDOOR_PUBLIC_URL are not set: fit for make run on this machine only.
const (
	DefaultMailFrom  = "Stagedoor <tickets@localhost>"
	DefaultPublicURL = "http://localhost:8080"
)

// problemOf makes a check of check: the error's text, or "".
func problemOf(check func(string) error) func(string) string {
	return func(v string) string {
		if err := check(v); err != nil {
			return err.Error()
		}
		return ""
	}
}

// RecoveryMargin is how many payment timeouts a pending order must be older
// than before recovery settles it: comfortably past the charge's deadline and
// the time its checkout has to write the outcome.
const RecoveryMargin = 3

// reader reads variables, collecting an *Error for each bad one.
type reader struct {
	getenv func(string) string
	errs   []error
	bad    map[string]bool
}

func (r *reader) fail(variable, value, problem string) {
	r.errs = append(r.errs, &Error{Variable: variable, Value: value, Problem: problem})
	if r.bad == nil {
		r.bad = map[string]bool{}
	}
	r.bad[variable] = true
}

func (r *reader) ok(variable string) bool { return !r.bad[variable] }

func (r *reader) str(variable, def string) string {
	if v := strings.TrimSpace(r.getenv(variable)); v != "" {
		return v
	}
	return def
}

// checked is str for an address: a set value must pass check (which says
// what is wrong with it, or ""), so a bad address stops the start before any
// migration or connection. A password in the value is not repeated.
func (r *reader) checked(variable, def string, check func(string) string) string {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	if problem := check(v); problem != "" {
		r.fail(variable, redactURL(v), problem)
		return def
	}
	return v
}

func (r *reader) integer(variable string, def, min, max int) int {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.fail(variable, v, fmt.Sprintf("must be a whole number from %d to %d", min, max))
		return def
	}
	return n
}

func (r *reader) fraction(variable string, def float64) float64 {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		r.fail(variable, v, "must be a number from 0 to 1")
		return def
	}
	return f
}

func (r *reader) boolean(variable string, def bool) bool {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(variable, v, "must be true or false")
		return def
	}
	return b
}

func (r *reader) duration(variable string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(variable, v, "must be a positive duration such as 500ms, 2s or 10m")
		return def
	}
	return d
}

// durationOrZero is duration, where 0 is allowed too.
func (r *reader) durationOrZero(variable string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		r.fail(variable, v, "must be 0 or a positive duration such as 500ms or 2s")
		return def
	}
	return d
}

func (r *reader) oneOf(variable, def string, allowed ...string) string {
	v := strings.ToLower(strings.TrimSpace(r.getenv(variable)))
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(variable, v, "must be one of "+strings.Join(allowed, ", "))
	return def
}

// protection is integer for the variable of a protection of internal/limits,
// from its default there.
func (r *reader) protection(name ratelimit.Name, min, max int) int {
	p := limits.Of(name)
	def, err := strconv.Atoi(p.Default)
	if err != nil {
		panic("config: " + p.Variable + "'s default is not a number: " + p.Default)
	}
	return r.integer(p.Variable, def, min, max)
}

// mode is the starting mode of a protection whose variable is its mode.
func (r *reader) mode(name ratelimit.Name) ratelimit.Mode {
	p := limits.Of(name)
	return ratelimit.Mode(r.oneOf(p.Variable, p.Default, string(ratelimit.Enforce), string(ratelimit.Shadow), string(ratelimit.Off)))
}

func (r *reader) limit(variable, def string) ratelimit.Limit {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		v = def
	}
	l, err := ratelimit.ParseLimit(v)
	if err != nil {
		r.fail(variable, v, err.Error())
		l, _ = ratelimit.ParseLimit(def)
	}
	return l
}

// prefixes reads comma-separated CIDRs; a bare address means just that address.
func (r *reader) prefixes(variable string) []netip.Prefix {
	v := strings.TrimSpace(r.getenv(variable))
	if v == "" {
		return nil
	}
	var out []netip.Prefix
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(part); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		r.fail(variable, v, fmt.Sprintf("%q is not a CIDR such as 10.0.0.0/8 or an address", part))
		return nil
	}
	return out
}

// visibleASCII reports whether s is min to max printable ASCII characters,
// spaces excluded: a secret that travels in a header as it is.
func visibleASCII(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
