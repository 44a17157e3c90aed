package config

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatalf("Load with no variables: %v", err)
	}
	if c.Addr != ":8080" || c.DBPool != 24 || c.MaxInFlight != 400 || c.CheckoutSlots != 20 ||
		c.BcryptCost != 12 || c.HoldTTL != 10*time.Minute || c.RecoveryAfter != time.Minute ||
		!c.AutoMigrate || c.PayrailLatency != 400*time.Millisecond || c.PayrailURL != "http://127.0.0.1:8090" ||
		c.PaymentTimeout != 5*time.Second || c.BreakerBuyers != 20 || c.PayrailDatabase != c.DatabaseURL || c.PayrailJitter != 0 || c.PayrailRecord != 0 ||
		c.BodyTimeout != 5*time.Second || c.MaxHeldSeats != 10 || c.ReholdCooldown != time.Minute ||
		c.BuyerConcurrency != 5 || c.OrganizerConcurrency != 20 || c.FleetCapacity != 0 || c.FleetReserve != 0.2 || c.WorkerUtilization != "enforce" ||
		c.MetricsAddr != "127.0.0.1:9091" || c.MaxConnections != 10_000 || c.WriteTimeout != 10*time.Second ||
		c.DirectDatabaseURL != "" || c.Pooled() || c.SessionDatabaseURL() != c.DatabaseURL || c.LogFormat != "auto" ||
		c.SMTPURL != "" || c.MailFrom != "Stagedoor <tickets@localhost>" || c.PublicURL != "http://localhost:8080" {
		t.Errorf("defaults differ from docs/configuration.md: %+v", c)
	}
	// Every bucket of the registry at its declared default (a new limit is
	// declared once, in internal/limits, not listed here again).
	for _, p := range limits.All {
		if p.Kind != limits.Bucket {
			continue
		}
		want, err := ratelimit.ParseLimit(p.Default)
		if err != nil {
			t.Fatalf("%s's default %q: %v", p.Name, p.Default, err)
		}
		if got := c.Limits[p.Name]; got != want {
			t.Errorf("limit %s = %v, want its default %v", p.Name, got, want)
		}
	}
	if got := c.Limits["checkout-buyer"]; got != (ratelimit.Limit{Rate: 5, Period: 10 * time.Minute, Burst: 5}) {
		t.Errorf("checkout-buyer = %v, want 5/10m burst 5 (docs/money.md)", got)
	}
}

func TestOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"STAGEDOOR_LIMIT_HOLD_BUYER": "3/1s burst 9",
		"STAGEDOOR_TRUSTED_PROXIES":  "10.0.0.0/8, 192.168.1.7,fd00::/8",
		"STAGEDOOR_MAX_IN_FLIGHT":    "2",
		"STAGEDOOR_AUTO_MIGRATE":     "false",
		"STAGEDOOR_LOG_FORMAT":       "text",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Limits["hold-buyer"]; got != (ratelimit.Limit{Rate: 3, Period: time.Second, Burst: 9}) {
		t.Errorf("hold-buyer = %v", got)
	}
	if len(c.TrustedProxies) != 3 || c.TrustedProxies[1].String() != "192.168.1.7/32" {
		t.Errorf("trusted proxies = %v", c.TrustedProxies)
	}
	if c.MaxInFlight != 2 || c.AutoMigrate || c.LogFormat != "text" {
		t.Errorf("overrides not applied: %+v", c)
	}
}

func TestBadValuesNameTheirVariable(t *testing.T) {
	tests := []struct {
		variable, value string
	}{
		{"STAGEDOOR_LIMIT_HOLD_BUYER", "ten a minute"},
		{"STAGEDOOR_LIMIT_LOGIN_EMAIL", "0/1h"},
		{"STAGEDOOR_LIMIT_SCANNER_KEY", "20/1s burst"},
		{"STAGEDOOR_DB_POOL", "many"},
		{"STAGEDOOR_MAX_IN_FLIGHT", "0"},
		{"STAGEDOOR_BCRYPT_COST", "40"},
		{"STAGEDOOR_HOLD_TTL", "-1m"},
		{"STAGEDOOR_AUTO_MIGRATE", "perhaps"},
		{"STAGEDOOR_TRUSTED_PROXIES", "10.0.0.0/33"},
		{"PAYRAIL_FAILURE_RATE", "1.5"},
		{"PAYRAIL_LATENCY_JITTER", "-1s"},
		{"PAYRAIL_RECORD_DELAY", "soon"},
		{"STAGEDOOR_PAYMENT_TIMEOUT", "0s"},
		{"STAGEDOOR_CHECKOUT_SLOTS", "24"},
		{"STAGEDOOR_ADMIN_TOKEN", "short"},
		{"PAYRAIL_API_KEY", "short"},
		{"STAGEDOOR_PAYMENT_BREAKER_BUYERS", "2"},
		{"PAYRAIL_API_KEY", "a key with spaces in it"},
		{"STAGEDOOR_LIMIT_CHECKOUT_BUYER", "5 a minute"},
		{"STAGEDOOR_LOG_LEVEL", "loud"},
		{"STAGEDOOR_LOG_FORMAT", "logfmt"},
		{"STAGEDOOR_BODY_TIMEOUT", "0s"},
		{"STAGEDOOR_MAX_HELD_SEATS", "0"},
		{"STAGEDOOR_METRICS_ADDR", "9091"},
		{"STAGEDOOR_MAX_CONNECTIONS", "1"},
		{"STAGEDOOR_MAX_CONNECTIONS", "5000"}, // not more than STAGEDOOR_MAX_STREAMS
		{"STAGEDOOR_WRITE_TIMEOUT", "0s"},
		{"STAGEDOOR_REHOLD_COOLDOWN", "-1s"},
		{"STAGEDOOR_REHOLD_COOLDOWN", "a minute"},
		{"STAGEDOOR_LIMIT_SIGNUP_ADDRESS", "five"},
		{"STAGEDOOR_ADDR", "nonsense"},
		{"STAGEDOOR_ADDR", "8080"},
		{"STAGEDOOR_ADDR", ":99999"},
		{"STAGEDOOR_ADDR", ":http"},
		{"STAGEDOOR_ADDR", "bad host:8080"},
		{"PAYRAIL_ADDR", "127.0.0.1"},
		{"PAYRAIL_ADDR", "127.0.0.1:-1"},
		{"DATABASE_URL", "nonsense"},
		{"DATABASE_URL", "mysql://root@127.0.0.1/stagedoor"},
		{"DATABASE_URL", "postgres:///stagedoor"},
		{"DATABASE_URL", "postgres://127.0.0.1:5432x/stagedoor"},
		{"DATABASE_URL", "postgres://127.0.0.1:70000/stagedoor"},
		{"PAYRAIL_DATABASE_URL", "localhost:5432"},
		{"STAGEDOOR_DIRECT_DATABASE_URL", "localhost:5432"},
		{"STAGEDOOR_DIRECT_DATABASE_URL", "mysql://root@127.0.0.1/stagedoor"},
		{"REDIS_URL", "nonsense"},
		{"REDIS_URL", "http://127.0.0.1:6379"},
		{"REDIS_URL", "redis://"},
		{"REDIS_URL", "redis://127.0.0.1:6379/zero"},
		{"REDIS_URL", "10.0.0.1:7000,10.0.0.2"},
		{"REDIS_URL", "unix://"},
		{"PAYRAIL_URL", "127.0.0.1:8090"},
		{"PAYRAIL_URL", "ftp://127.0.0.1:8090"},
		{"PAYRAIL_URL", "http://"},
		{"PAYRAIL_URL", "http://127.0.0.1:port"},
		{"STAGEDOOR_SMTP_URL", "mail.example.com:25"},
		{"STAGEDOOR_SMTP_URL", "http://mail.example.com"},
		{"STAGEDOOR_SMTP_URL", "smtp://"},
		{"STAGEDOOR_SMTP_URL", "smtp://mail.example.com:0"},
		{"STAGEDOOR_SMTP_URL", "smtp://mail.example.com:port"},
		{"STAGEDOOR_SMTP_URL", "smtps://mail.example.com/inbox"},
		{"STAGEDOOR_SMTP_URL", "smtp://:secret@mail.example.com"},
		{"STAGEDOOR_MAIL_FROM", "Stagedoor"},
		{"STAGEDOOR_MAIL_FROM", "a@example.com, b@example.com"},
		{"STAGEDOOR_MAIL_FROM", "tickets@"},
		{"STAGEDOOR_PUBLIC_URL", "tickets.example.com"},
		{"STAGEDOOR_PUBLIC_URL", "ftp://tickets.example.com"},
		{"STAGEDOOR_PUBLIC_URL", "https://tickets.example.com/?x=1"},
		{"STAGEDOOR_PUBLIC_URL", "https://tickets.example.com/#/tickets"},
	}
	for _, tt := range tests {
		t.Run(tt.variable+"="+tt.value, func(t *testing.T) {
			_, err := Load(env(map[string]string{tt.variable: tt.value}))
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("Load(%s=%q) = %v, want a *config.Error", tt.variable, tt.value, err)
			}
			if cfgErr.Variable != tt.variable || !strings.Contains(err.Error(), tt.variable) {
				t.Errorf("error %q does not name %s", err, tt.variable)
			}
		})
	}
}

func TestEveryBadVariableIsReported(t *testing.T) {
	_, err := Load(env(map[string]string{"STAGEDOOR_DB_POOL": "x", "STAGEDOOR_LIMIT_QUEUE_JOIN": "y"}))
	if err == nil || !strings.Contains(err.Error(), "STAGEDOOR_DB_POOL") || !strings.Contains(err.Error(), "STAGEDOOR_LIMIT_QUEUE_JOIN") {
		t.Fatalf("want both variables named, got %v", err)
	}
}

// TestRecoveryMustOutwaitThePayment: a recovery age that is not comfortably
// longer than the payment deadline stops the start, naming both variables.
func TestRecoveryMustOutwaitThePayment(t *testing.T) {
	for _, tt := range []struct {
		recovery, timeout string
		ok                bool
	}{
		{"1m", "5s", true},
		{"15s", "5s", true},
		{"14s", "5s", false},
		{"1m", "30s", false},
		{"2s", "600ms", true},
	} {
		_, err := Load(env(map[string]string{"STAGEDOOR_RECOVERY_AFTER": tt.recovery, "STAGEDOOR_PAYMENT_TIMEOUT": tt.timeout}))
		if tt.ok != (err == nil) {
			t.Errorf("recovery %s, timeout %s: Load = %v, want ok %v", tt.recovery, tt.timeout, err, tt.ok)
		}
		var cfgErr *Error
		if err != nil && (!errors.As(err, &cfgErr) || !strings.Contains(err.Error(), "STAGEDOOR_RECOVERY_AFTER") ||
			!strings.Contains(err.Error(), "STAGEDOOR_PAYMENT_TIMEOUT")) {
			t.Errorf("error %q does not name both variables", err)
		}
	}
	if _, err := Load(env(map[string]string{"STAGEDOOR_PAYMENT_TIMEOUT": "30s"})); err == nil {
		t.Error("a 30 s payment deadline with the default 1m recovery was accepted")
	}
}

// TestGoodAddressesPass: the address forms docs/configuration.md and internal/conn
// accept are accepted, unchanged.
func TestGoodAddressesPass(t *testing.T) {
	for _, tt := range []struct{ variable, value string }{
		{"STAGEDOOR_ADDR", ":8080"},
		{"STAGEDOOR_ADDR", "127.0.0.1:0"},
		{"STAGEDOOR_ADDR", "[::1]:8080"},
		{"STAGEDOOR_ADDR", "localhost:8080"},
		{"PAYRAIL_ADDR", "0.0.0.0:8090"},
		{"STAGEDOOR_METRICS_ADDR", ":9091"},
		{"DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/stagedoor?sslmode=disable"},
		{"DATABASE_URL", "postgresql://stagedoor@db.internal/stagedoor"},
		{"DATABASE_URL", "postgres://u:p@[::1]:5432/x"},
		{"DATABASE_URL", "postgres://db1:5432,db2:5433/stagedoor?target_session_attrs=read-write"},
		{"DATABASE_URL", "postgres:///stagedoor?host=/var/run/postgresql"},
		{"PAYRAIL_DATABASE_URL", "postgres://postgres@postgres:5432/stagedoor"},
		{"STAGEDOOR_DIRECT_DATABASE_URL", "postgres://postgres@postgres:5432/stagedoor?sslmode=disable"},
		{"REDIS_URL", "redis://127.0.0.1:6379/0"},
		{"REDIS_URL", "rediss://user:secret@cache.example.com:6380"},
		{"REDIS_URL", "redis://redis:6379"},
		{"REDIS_URL", "unix:///run/redis/redis.sock"},
		{"REDIS_URL", "10.0.0.1:7000, 10.0.0.2:7000,redis://10.0.0.3:7000"},
		{"PAYRAIL_URL", "http://payrail:8090"},
		{"PAYRAIL_URL", "https://payrail.example.com"},
		{"STAGEDOOR_SMTP_URL", "smtp://127.0.0.1:1025"},
		{"STAGEDOOR_SMTP_URL", "smtps://stagedoor:s3cret@mail.example.com"},
		{"STAGEDOOR_SMTP_URL", "smtp://apikey:a%2Fb%40c@smtp.example.com:587"},
		{"STAGEDOOR_MAIL_FROM", "tickets@example.com"},
		{"STAGEDOOR_MAIL_FROM", "Théâtre du Nord <billets@example.fr>"},
		{"STAGEDOOR_PUBLIC_URL", "https://tickets.example.com"},
		{"STAGEDOOR_PUBLIC_URL", "http://127.0.0.1:8080/stagedoor/"},
	} {
		c, err := Load(env(map[string]string{tt.variable: tt.value}))
		if err != nil {
			t.Errorf("Load(%s=%q) = %v, want it accepted", tt.variable, tt.value, err)
			continue
		}
		got := map[string]string{"STAGEDOOR_ADDR": c.Addr, "STAGEDOOR_METRICS_ADDR": c.MetricsAddr, "PAYRAIL_ADDR": c.PayrailAddr, "DATABASE_URL": c.DatabaseURL,
			"PAYRAIL_DATABASE_URL": c.PayrailDatabase, "REDIS_URL": c.RedisURL, "PAYRAIL_URL": c.PayrailURL,
			"STAGEDOOR_DIRECT_DATABASE_URL": c.DirectDatabaseURL, "STAGEDOOR_SMTP_URL": c.SMTPURL, "STAGEDOOR_MAIL_FROM": c.MailFrom,
			"STAGEDOOR_PUBLIC_URL": c.PublicURL}[tt.variable]
		if got != tt.value {
			t.Errorf("Load(%s=%q) read %q", tt.variable, tt.value, got)
		}
	}
}

// TestBadURLHidesItsPassword: the message about a bad URL names the variable
// but never repeats a password in it.
func TestBadURLHidesItsPassword(t *testing.T) {
	for variable, value := range map[string]string{
		"DATABASE_URL":                  "mysql://root:hunter2hunter2@127.0.0.1/stagedoor",
		"PAYRAIL_DATABASE_URL":          "postgres://root:hunter2hunter2@127.0.0.1:5432x/stagedoor",
		"STAGEDOOR_DIRECT_DATABASE_URL": "postgres://root:hunter2hunter2@127.0.0.1:5432x/stagedoor",
		"REDIS_URL":                     "redis://:hunter2hunter2@127.0.0.1:6379/zero",
		"PAYRAIL_URL":                   "ftp://me:hunter2hunter2@127.0.0.1",
		"STAGEDOOR_SMTP_URL":            "smtp://me:hunter2hunter2@mail.example.com:99999",
	} {
		_, err := Load(env(map[string]string{variable: value}))
		if err == nil || !strings.Contains(err.Error(), variable) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Load(%s=%q) = %v: want the variable named and the password hidden", variable, value, err)
		}
	}
}

// TestADirectURLMakesDatabaseURLAPooler: with STAGEDOOR_DIRECT_DATABASE_URL
// set, DATABASE_URL is a transaction pooler and sessions go to the direct URL.
func TestADirectURLMakesDatabaseURLAPooler(t *testing.T) {
	const pooler, direct = "postgres://u:p@127.0.0.1:6432/stagedoor", "postgres://u:p@127.0.0.1:5432/stagedoor"
	c, err := Load(env(map[string]string{"DATABASE_URL": pooler, "STAGEDOOR_DIRECT_DATABASE_URL": direct}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Pooled() || c.DatabaseURL != pooler || c.SessionDatabaseURL() != direct || c.PayrailDatabase != pooler {
		t.Errorf("pooled %v, DATABASE_URL %q, sessions on %q, Payrail on %q", c.Pooled(), c.DatabaseURL, c.SessionDatabaseURL(), c.PayrailDatabase)
	}
}

// TestEveryVariableIsDocumented: every variable Load reads has its row in
// docs/configuration.md's table.
func TestEveryVariableIsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	if _, err := Load(func(k string) string { read[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	if len(read) < 40 {
		t.Fatalf("Load read only %d variables: %v", len(read), read)
	}
	for v := range read {
		if !strings.Contains(string(raw), "| `"+v+"` |") {
			t.Errorf("%s is read by config.Load but has no row in docs/configuration.md", v)
		}
	}
}

// TestEveryProtectionsVariableIsDocumented: docs/configuration.md has a row of
// each variable of the registry (internal/limits) with the registry's
// default, so that a limit added there cannot go undocumented.
func TestEveryProtectionsVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range limits.All {
		if p.Variable == "" {
			continue
		}
		row := "| `" + p.Variable + "` | `" + p.Default + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/configuration.md has no row %q for %s", row, p.Name)
		}
	}
}
