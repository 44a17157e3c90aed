package limitadmin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var admin = Actor{Principal: "admin", RequestID: "test", Address: "127.0.0.1"}

func ptr[T any](v T) *T { return &v }

// definitions are two limits in enforce mode, as the environment gives them.
func definitions(a, b ratelimit.Limit) []ratelimit.Definition {
	return []ratelimit.Definition{
		{Name: "alpha", Setting: ratelimit.Setting{Limit: a, Mode: ratelimit.Enforce}},
		{Name: "beta", Setting: ratelimit.Setting{Limit: b, Mode: ratelimit.Enforce}},
	}
}

// started is one instance: a Limiter of defs and a started Service on db. The
// Limiter has no Redis: these tests only set and read settings, never decide.
func started(t *testing.T, db *pgxpool.Pool, defs []ratelimit.Definition, poll time.Duration) (*Service, *ratelimit.Limiter) {
	t.Helper()
	lim := ratelimit.New(nil, ratelimit.Options{Limits: defs})
	svc := New(db, lim, Options{PollInterval: poll, Registerer: prometheus.NewRegistry(), Logger: quiet})
	if err := svc.Start(context.Background(), defs); err != nil {
		t.Fatal(err)
	}
	return svc, lim
}

// running starts svc.Run until the test ends.
func running(t *testing.T, svc *Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// listening reports whether one listening connection is open on db.
func listening(db *pgxpool.Pool) func() bool {
	return func() bool {
		var n int
		_ = db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, listenerName).Scan(&n)
		return n == 1
	}
}

// within polls cond for up to d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, d, cond, what)
}

func TestEnvironmentSeedsAndStoredSettingWins(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	first, _ := started(t, db, definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200)), time.Hour)
	list, err := first.List(context.Background())
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "beta" ||
		list[0].Setting.String() != "10/1m enforce" || list[0].UpdatedBy != "environment" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	got, err := first.Update(context.Background(), "alpha", Change{Mode: "shadow", Rate: ptr(5)}, admin)
	if err != nil || got.Setting.String() != "5/1m burst 10 shadow" || !strings.Contains(got.UpdatedBy, "admin") {
		t.Fatalf("Update = %+v, %v; want 5/1m burst 10 shadow (burst kept)", got, err)
	}

	// A restart with other environment values keeps what is stored.
	second, lim := started(t, db, definitions(ratelimit.PerSecond(99), ratelimit.PerHour(7)), time.Hour)
	if s, _ := lim.Setting("alpha"); s.String() != "5/1m burst 10 shadow" {
		t.Errorf("after a restart alpha is %s, want the stored 5/1m burst 10 shadow", s)
	}
	if s, _ := lim.Setting("beta"); s.String() != "200/1s enforce" {
		t.Errorf("after a restart beta is %s, want the stored 200/1s enforce", s)
	}
	if v := testutil.ToFloat64(second.gauge.WithLabelValues("alpha", "shadow")); v != 1 {
		t.Errorf("gauge alpha/shadow = %v, want 1", v)
	}
	if v := testutil.ToFloat64(second.gauge.WithLabelValues("alpha", "enforce")); v != 0 {
		t.Errorf("gauge alpha/enforce = %v, want 0", v)
	}
	if v := testutil.ToFloat64(second.defaults.WithLabelValues("alpha", "enforce")); v != 1 {
		t.Errorf("default gauge alpha/enforce = %v, want 1: the environment's mode, whatever is stored", v)
	}
	if v := testutil.ToFloat64(second.defaults.WithLabelValues("alpha", "shadow")); v != 0 {
		t.Errorf("default gauge alpha/shadow = %v, want 0", v)
	}
}

func TestUpdateRefusesBadChanges(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	svc, lim := started(t, db, definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200)), time.Hour)
	before, _ := svc.List(context.Background())
	for _, tt := range []struct {
		name   string
		limit  ratelimit.Name
		change Change
		want   error
		field  string
	}{
		{"unknown limit", "gamma", Change{Mode: "off"}, errkind.NotFound, "gamma"},
		{"no mode", "alpha", Change{Rate: ptr(5)}, errkind.Invalid, "mode"},
		{"bad mode", "alpha", Change{Mode: "Enforce"}, errkind.Invalid, "mode"},
		{"zero rate", "alpha", Change{Mode: "enforce", Rate: ptr(0)}, errkind.Invalid, "rate"},
		{"huge rate", "alpha", Change{Mode: "enforce", Rate: ptr(MaxRate + 1)}, errkind.Invalid, "rate"},
		{"negative period", "alpha", Change{Mode: "enforce", PeriodMS: ptr(int64(-1))}, errkind.Invalid, "period_ms"},
		{"period over a year", "alpha", Change{Mode: "enforce", PeriodMS: ptr(MaxPeriodMS + 1)}, errkind.Invalid, "period_ms"},
		{"zero burst", "alpha", Change{Mode: "enforce", Burst: ptr(0)}, errkind.Invalid, "burst"},
		{"rate over one a microsecond", "alpha", Change{Mode: "enforce", Rate: ptr(2000), PeriodMS: ptr(int64(1))}, errkind.Invalid, "rate"},
		{"a year to fill", "alpha", Change{Mode: "enforce", Rate: ptr(1), PeriodMS: ptr(MaxPeriodMS), Burst: ptr(2)}, errkind.Invalid, "burst"},
	} {
		_, err := svc.Update(context.Background(), tt.limit, tt.change, admin)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: Update = %v, want %v naming %q", tt.name, err, tt.want, tt.field)
		}
	}
	after, _ := svc.List(context.Background())
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a refused change was stored: before %+v, after %+v", before, after)
	}
	if s, _ := lim.Setting("alpha"); s.String() != "10/1m enforce" {
		t.Errorf("a refused change was applied: alpha is %s", s)
	}
}

// TestAMissedNotificationIsCaughtByTheReRead: with the listening connection
// unable to open, a row changed without NOTIFY (a lost notification) is still
// applied, by the periodic re-read.
func TestAMissedNotificationIsCaughtByTheReRead(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	svc, lim := started(t, db, definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200)), 200*time.Millisecond)
	svc.listenTo.Database = "no_such_database"
	running(t, svc)
	if _, err := db.Exec(context.Background(),
		`UPDATE limit_settings SET mode = 'off', rate = 3 WHERE name = 'beta'`); err != nil {
		t.Fatal(err)
	}
	within(t, 2*time.Second, "beta off by the re-read", func() bool {
		s, _ := lim.Setting("beta")
		return s.String() == "3/1s burst 200 off"
	})
	if v := testutil.ToFloat64(svc.gauge.WithLabelValues("beta", "off")); v != 1 {
		t.Errorf("gauge beta/off = %v, want 1", v)
	}
}

// TestListenerReconnects: with the re-read an hour away, only notifications can
// carry a change; after the listening connection is killed, the next change
// still arrives within 2 s.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	defs := definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200))
	watcher, lim := started(t, db, defs, time.Hour)
	running(t, watcher)
	changer, _ := started(t, db, defs, time.Hour)

	within(t, 2*time.Second, "the watcher listens", listening(db))
	mode := func(m string) func() bool {
		return func() bool { s, _ := lim.Setting("alpha"); return string(s.Mode) == m }
	}
	if _, err := changer.Update(context.Background(), "alpha", Change{Mode: "shadow"}, admin); err != nil {
		t.Fatal(err)
	}
	within(t, 2*time.Second, "alpha shadow by notification", mode("shadow"))

	if _, err := db.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, listenerName); err != nil {
		t.Fatal(err)
	}
	if _, err := changer.Update(context.Background(), "alpha", Change{Mode: "off"}, admin); err != nil {
		t.Fatal(err)
	}
	within(t, 2*time.Second, "alpha off after the listener was killed", mode("off"))
	within(t, 2*time.Second, "the watcher listens again", listening(db))
}

// TestAChangeIsLoggedWithWhoAndWhat: the change's log line names the admin, the
// request and the client, and the old and new settings.
func TestAChangeIsLoggedWithWhoAndWhat(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	defs := definitions(ratelimit.PerMinute(10), ratelimit.PerSecond(200))
	var log strings.Builder
	lim := ratelimit.New(nil, ratelimit.Options{Limits: defs})
	svc := New(db, lim, Options{Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if err := svc.Start(context.Background(), defs); err != nil {
		t.Fatal(err)
	}
	by := Actor{Principal: "admin", RequestID: "req-77", Address: "192.0.2.9"}
	if _, err := svc.Update(context.Background(), "alpha", Change{Mode: "off", Burst: ptr(20)}, by); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"msg":"limit setting changed"`, `"limit":"alpha"`, `"old":"10/1m enforce"`,
		`"new":"10/1m burst 20 off"`, `"by":{"principal":"admin","request_id":"req-77","client":"192.0.2.9"}`,
		`"msg":"limit setting applied"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, log.String())
		}
	}
}
