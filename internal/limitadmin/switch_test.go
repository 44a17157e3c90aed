package limitadmin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/protect"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// moded is a protection with a mode and nothing else: what the Service needs
// of a concurrency limit or a shedder. Its mode starts as Enforce.
type moded struct {
	name ratelimit.Name
	mode protect.ModeSwitch
}

func (m *moded) Name() ratelimit.Name        { return m.name }
func (m *moded) Mode() ratelimit.Mode        { return m.mode.Load() }
func (m *moded) SetMode(mode ratelimit.Mode) { m.mode.Store(mode) }

// withSwitches is one instance with the limit alpha, a concurrency limit and a
// shedder, all starting enforced.
func withSwitches(t *testing.T, poll time.Duration) (*Service, *moded, *moded) {
	t.Helper()
	db := testenv.Postgres(t)
	return withSwitchesOn(t, db, poll)
}

func TestSwitchesAreListedAndSetLikeLimits(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	a, concA, shedA := withSwitchesOn(t, db, time.Hour)
	b, concB, shedB := withSwitchesOn(t, db, 100*time.Millisecond)
	running(t, b)

	list, err := a.List(context.Background())
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %+v, %v; want alpha and two switches", list, err)
	}
	if got := list[1]; got.Name != "buyer-concurrency" || got.Kind != limits.Lease || got.MaxInFlight != 5 ||
		got.Setting.Mode != ratelimit.Enforce || got.UpdatedBy != fromEnvironment {
		t.Errorf("List[1] = %+v, want buyer-concurrency, a concurrency limit of 5 in force from the environment", got)
	}
	if got := list[2]; got.Name != "fleet-usage" || got.Kind != limits.Shedder || got.Setting.Limit != (ratelimit.Limit{}) {
		t.Errorf("List[2] = %+v, want fleet-usage, a shedder without a bucket", got)
	}

	got, err := a.Update(context.Background(), "fleet-usage", Change{Mode: "off"}, admin)
	if err != nil || got.Kind != limits.Shedder || got.Setting.Mode != ratelimit.Off || !strings.Contains(got.UpdatedBy, "admin") {
		t.Fatalf("Update fleet-usage off = %+v, %v", got, err)
	}
	if shedA.Mode() != ratelimit.Off {
		t.Errorf("fleet-usage is %s here after the change, want off at once", shedA.Mode())
	}
	within(t, 2*time.Second, "fleet-usage off on the other instance", func() bool { return shedB.Mode() == ratelimit.Off })
	if concA.Mode() != ratelimit.Enforce || concB.Mode() != ratelimit.Enforce {
		t.Errorf("buyer-concurrency changed with fleet-usage: %s, %s", concA.Mode(), concB.Mode())
	}

	// A restart keeps the stored mode over the environment's.
	_, _, shedC := withSwitchesOn(t, db, time.Hour)
	if shedC.Mode() != ratelimit.Off {
		t.Errorf("after a restart fleet-usage is %s, want the stored off", shedC.Mode())
	}
}

func TestASwitchTakesOnlyAMode(t *testing.T) {
	t.Parallel()
	svc, conc, _ := withSwitches(t, time.Hour)
	for _, tt := range []struct {
		change Change
		field  string
	}{
		{Change{Mode: "shadow", Rate: ptr(5)}, "only its mode"},
		{Change{Mode: "shadow", Burst: ptr(5)}, "only its mode"},
		{Change{Mode: "loud"}, "mode"},
		{Change{}, "mode is required"},
	} {
		_, err := svc.Update(context.Background(), "buyer-concurrency", tt.change, admin)
		if !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("Update(%+v) = %v, want invalid naming %q", tt.change, err, tt.field)
		}
	}
	if conc.Mode() != ratelimit.Enforce {
		t.Errorf("a refused change was applied: %s", conc.Mode())
	}
}

func withSwitchesOn(t *testing.T, pool *pgxpool.Pool, poll time.Duration) (*Service, *moded, *moded) {
	t.Helper()
	defs := definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200))[:1]
	conc := &moded{name: "buyer-concurrency"}
	shed := &moded{name: "fleet-usage"}
	lim := ratelimit.New(nil, ratelimit.Options{Limits: defs})
	svc := New(pool, lim, Options{PollInterval: poll, Registerer: prometheus.NewRegistry(), Logger: quiet,
		Switches: []Switch{{Kind: limits.Lease, Of: conc, MaxInFlight: 5}, {Kind: limits.Shedder, Of: shed}}})
	if err := svc.Start(context.Background(), defs); err != nil {
		t.Fatal(err)
	}
	return svc, conc, shed
}
