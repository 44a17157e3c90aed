package limits_test

import (
	"strconv"
	"testing"

	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// TestEveryProtectionIsDeclaredWhole: each name once, each with a kind, a
// key and a ring; a bucket's default is a limit, a lease's a number, each
// variable set once; only what an admin switches has a mode.
func TestEveryProtectionIsDeclaredWhole(t *testing.T) {
	names, variables := map[ratelimit.Name]bool{}, map[string]bool{}
	for _, p := range limits.All {
		if names[p.Name] || p.Name == "" {
			t.Errorf("%q is declared twice, or has no name", p.Name)
		}
		names[p.Name] = true
		if p.Kind == "" || p.Key == "" || p.Ring == 0 || p.RedisDown == "" {
			t.Errorf("%s: kind %q, key %q, ring %d, Redis down %q: none may be unset", p.Name, p.Kind, p.Key, p.Ring, p.RedisDown)
		}
		if p.Variable != "" && variables[p.Variable] {
			t.Errorf("%s: %s sets another protection too", p.Name, p.Variable)
		}
		variables[p.Variable] = true
		switch p.Kind {
		case limits.Bucket:
			if _, err := ratelimit.ParseLimit(p.Default); err != nil || p.Mode != ratelimit.Enforce {
				t.Errorf("%s: default %q (%v), mode %q", p.Name, p.Default, err, p.Mode)
			}
		case limits.Lease, limits.Bound:
			if _, err := strconv.Atoi(p.Default); err != nil {
				t.Errorf("%s: default %q is not a number", p.Name, p.Default)
			}
		}
		if switched := p.Kind == limits.Bucket || p.Kind == limits.Lease || p.Kind == limits.Shedder; switched != (p.Mode != "") {
			t.Errorf("%s: a %s with mode %q", p.Name, p.Kind, p.Mode)
		}
		if got := limits.Of(p.Name); got.Name != p.Name {
			t.Errorf("Of(%s) = %s", p.Name, got.Name)
		}
	}
	if got := limits.Of(limits.HoldOrganizer).Policy(); got != ratelimit.FailOpen|ratelimit.Leased {
		t.Errorf("hold-organizer's policy is %s, want fail-open+leased", got)
	}
	if got := limits.Of(limits.LoginEmail).Policy(); got != ratelimit.Fallback {
		t.Errorf("login-email's policy is %s, want fallback", got)
	}
}
