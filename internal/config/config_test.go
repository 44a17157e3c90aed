package config

import (
	"errors"
	"strings"
	"testing"
	"time"

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
		c.PaymentTimeout != 5*time.Second || c.PayrailDatabase != c.DatabaseURL || c.PayrailJitter != 0 || c.PayrailRecord != 0 ||
		c.BodyTimeout != 5*time.Second || c.MaxHeldSeats != 10 {
		t.Errorf("defaults differ from API.md: %+v", c)
	}
	want := map[ratelimit.Name]ratelimit.Limit{
		"login-address":  {Rate: 10, Period: time.Minute, Burst: 10},
		"login-email":    {Rate: 20, Period: time.Hour, Burst: 20},
		"hold-buyer":     {Rate: 10, Period: time.Minute, Burst: 10},
		"hold-organizer": {Rate: 200, Period: time.Second, Burst: 200},
		"scanner-key":    {Rate: 20, Period: time.Second, Burst: 50},
		"queue-join":     {Rate: 5, Period: time.Minute, Burst: 5},
		"signup-address": {Rate: 5, Period: time.Hour, Burst: 5},
		"event-create":   {Rate: 30, Period: time.Hour, Burst: 30},
		"login-device":   {Rate: 10, Period: time.Hour, Burst: 10},
	}
	for name, l := range want {
		if c.Limits[name] != l {
			t.Errorf("limit %s = %v, want %v", name, c.Limits[name], l)
		}
	}
}

func TestOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"STAGEDOOR_LIMIT_HOLD_BUYER": "3/1s burst 9",
		"STAGEDOOR_TRUSTED_PROXIES":  "10.0.0.0/8, 192.168.1.7,fd00::/8",
		"STAGEDOOR_MAX_IN_FLIGHT":    "2",
		"STAGEDOOR_AUTO_MIGRATE":     "false",
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
	if c.MaxInFlight != 2 || c.AutoMigrate {
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
		{"STAGEDOOR_LOG_LEVEL", "loud"},
		{"STAGEDOOR_BODY_TIMEOUT", "0s"},
		{"STAGEDOOR_MAX_HELD_SEATS", "0"},
		{"STAGEDOOR_LIMIT_SIGNUP_ADDRESS", "five"},
	}
	for _, tt := range tests {
		t.Run(tt.variable, func(t *testing.T) {
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
