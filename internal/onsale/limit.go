package onsale

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// LimitSetting is a limit's setting as the admin API shows it: here
// hold-buyer's, which a check of the run holds the holds to.
type LimitSetting struct {
	Rate     int    `json:"rate"`
	PeriodMS int64  `json:"period_ms"`
	Burst    int    `json:"burst"`
	Mode     string `json:"mode"`
	Source   string `json:"source"` // "admin API" or "assumed default"
}

// defaultHoldLimit is hold-buyer's default (internal/limits): 10/1m.
var defaultHoldLimit = LimitSetting{Rate: 10, PeriodMS: 60_000, Burst: 10, Mode: "enforce", Source: "assumed default"}

// The limits the simulator reads the answers of: hold-buyer decides every
// hold past the waiting room, queue-join every join.
const (
	limitHoldBuyer = "hold-buyer"
	limitQueueJoin = "queue-join"
)

// limitsInForce are the limits' settings as the admin API shows them, by
// name; without an admin token, hold-buyer's default alone.
type limitsInForce map[string]LimitSetting

// holdBuyer is hold-buyer's setting.
func (l limitsInForce) holdBuyer() LimitSetting {
	if s, ok := l[limitHoldBuyer]; ok {
		return s
	}
	return defaultHoldLimit
}

// enforced says whether a limit is enforced: assumed so when it is not known.
func (l limitsInForce) enforced(name string) bool {
	s, ok := l[name]
	return !ok || s.Mode == "enforce"
}

// readLimits reads the limits' settings through the admin API when
// adminToken is set (GET /v1/admin/limits), else assumes hold-buyer's
// default.
func readLimits(ctx context.Context, c *client, adminToken string) (limitsInForce, error) {
	out := limitsInForce{limitHoldBuyer: defaultHoldLimit}
	if adminToken == "" {
		return out, nil
	}
	a, err := c.setupCall(ctx, routeLimits, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListLimits(ctx, apiclient.Bearer(adminToken))
	})
	if err != nil {
		return nil, fmt.Errorf("onsale: read the limits: %w", err)
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("onsale: read the limits with the admin token: %d %s", a.status, a.body)
	}
	var all []struct {
		LimitSetting
		Name string `json:"name"`
	}
	if err := a.decode(&all); err != nil {
		return nil, err
	}
	for _, s := range all {
		s.LimitSetting.Source = "admin API"
		out[s.Name] = s.LimitSetting
	}
	return out, nil
}

// String is the limit as the configuration writes it: 10/1m burst 10
// (enforce, admin API).
func (l LimitSetting) String() string {
	return fmt.Sprintf("%d/%s burst %d (%s, %s)", l.Rate, period(l.Period()), l.Burst, l.Mode, l.Source)
}

// Period is the limit's period.
func (l LimitSetting) Period() time.Duration { return time.Duration(l.PeriodMS) * time.Millisecond }

// Short is the limit as the configuration writes it: 10/1m burst 10.
func (l LimitSetting) Short() string {
	return fmt.Sprintf("%d/%s burst %d", l.Rate, period(l.Period()), l.Burst)
}

// period writes a duration as a limit's period: 1m, 1s, 90s, 1h.
func period(d time.Duration) string {
	s := d.String()
	for _, unit := range []string{"h", "m"} {
		s = strings.Replace(s, unit+"0s", unit, 1)
	}
	return strings.Replace(s, "h0m", "h", 1)
}
