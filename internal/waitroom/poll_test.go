package waitroom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestPlaceAnswersAsRedisDoes: what a buyer's Place says at a moment of
// Redis's clock is exactly what the room's script says then (position, wait,
// admission), for early joiners after the draw, for late joiners, after
// buyers ahead of them joined again when their admission lapsed, and once
// their own admission lapsed.
func TestPlaceAnswersAsRedisDoes(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, 1500*time.Millisecond)
	ctx := context.Background()
	ev := roomEvent(20, testenv.RedisNow(t, rdb).Add(time.Second))
	places := map[string]Place{}
	for i := range 30 {
		b := fmt.Sprintf("early-%02d", i)
		st, err := s.Join(ctx, ev, b)
		if err != nil || st.Place.Drawn || st.Place.Lottery < 0 {
			t.Fatalf("early join = %+v, %v; want a place before the draw, with its lottery score", st, err)
		}
	}
	testenv.SleepUntilRedis(t, rdb, ev.OnSaleAt)
	for i := range 30 { // their places once drawn, as a poll's lookup gets them
		b := fmt.Sprintf("early-%02d", i)
		st, err := s.Poll(ctx, ev, b, nil)
		if err != nil || !st.Place.Drawn {
			t.Fatalf("poll after the draw = %+v, %v; want a drawn place", st, err)
		}
		places[b] = st.Place
	}
	for i := range 10 {
		b := fmt.Sprintf("late-%02d", i)
		st, err := s.Join(ctx, ev, b)
		if err != nil || !st.Place.Drawn {
			t.Fatalf("late join = %+v, %v; want a drawn place", st, err)
		}
		places[b] = st.Place
	}
	compare := func(round int) {
		t.Helper()
		p, err := s.Progress(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		for b, pl := range places {
			want, err := s.Status(ctx, ev, b)
			got, v := pl.at(p.schedule, want.Now, s.admission, 0)
			switch {
			case v == ask:
				// Admitted before the schedule changed: the place cannot say
				// when, and Poll asks the room, which can.
				if !p.schedule.changed() || pl.Tick >= p.schedule.k0 {
					t.Errorf("round %d: %s's place asks the room on schedule %+v", round, b, p.schedule)
				}
				if got, err = s.Poll(ctx, ev, b, &pl); err == nil && (got.State != Admitted || !got.AdmittedUntil.Equal(want.AdmittedUntil)) {
					t.Errorf("round %d: %s polled = %+v, by Redis = %+v", round, b, got, want)
				}
			case errors.Is(err, errkind.NotFound):
				// Lapsed by Redis's clock: by any later moment too.
				if got, v = pl.at(p.schedule, testenv.RedisNow(t, rdb), s.admission, 0); v == current {
					t.Errorf("round %d: %s lapsed by Redis, but her place says %+v", round, b, got)
				}
			case err != nil:
				t.Fatal(err)
			case v != current || got.State != want.State || got.Position != want.Position || got.Paused != want.Paused ||
				got.EstimatedWait != want.EstimatedWait || !got.AdmittedUntil.Equal(want.AdmittedUntil):
				t.Errorf("round %d: %s by her place = %+v (%v), by Redis = %+v", round, b, got, v, want)
			}
		}
	}
	compare(0)
	testenv.SleepUntilRedis(t, rdb, slot(ev, 12))
	compare(1)
	// The first three admitted lapse and join again: the ranks behind them
	// shrink, the places do not change, and still agree.
	first := slices.SortedFunc(maps.Keys(places), func(a, b string) int { return cmp.Compare(places[a].Tick, places[b].Tick) })[:3]
	testenv.SleepUntilRedis(t, rdb, slot(ev, 3).Add(s.admission))
	for _, b := range first {
		st, err := s.Join(ctx, ev, b)
		if err != nil || !st.Place.Drawn || st.Place.Rank < 40 {
			t.Fatalf("%s joining again after her admission lapsed = %+v, %v; want a place at the back", b, st, err)
		}
		places[b] = st.Place
	}
	p, err := s.Progress(ctx, ev)
	if err != nil || p.AdmittedThrough <= p.Admitted {
		t.Fatalf("progress = %+v, %v; want buyers who joined again counted in AdmittedThrough", p, err)
	}
	compare(2)
	testenv.SleepUntilRedis(t, rdb, slot(ev, 33))
	compare(3)
	// The operator pauses the room, changes its rate and resumes it: the
	// places still agree, those admitted before a change by asking the room.
	change := func(c Control) {
		t.Helper()
		if _, err := s.Change(ctx, ev, c); err != nil {
			t.Fatal(err)
		}
	}
	paused, resumed, faster := true, false, 50
	change(Control{Paused: &paused})
	compare(4)
	change(Control{Rate: &faster})
	compare(5)
	change(Control{Paused: &resumed})
	compare(6)
	testenv.SleepUntilRedis(t, rdb, testenv.RedisNow(t, rdb).Add(300*time.Millisecond))
	compare(7)
}

// TestPollsShareOneProgressRead: 200 polls at once with their places cost
// one progress call, and no more until ProgressMaxAge has passed on the
// instance's clock; 100 polls without a place that come while a lookup runs
// are asked about in one call; with Redis gone a poll with a place fails
// closed.
func TestPollsShareOneProgressRead(t *testing.T) {
	t.Parallel()
	private := testenv.StartPrivateRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: private.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	var calls atomic.Int64
	hook := &countHook{n: &calls}
	rdb.AddHook(hook)
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	s := New(rdb, Options{Timeout: 5 * time.Second, Clock: now})
	ctx := context.Background()
	ev := roomEvent(1, testenv.RedisNow(t, rdb).Add(-time.Second))
	var buyers []string
	places := map[string]Place{}
	for i := range 100 {
		b := fmt.Sprintf("buyer-%03d", i)
		st, err := s.Join(ctx, ev, b)
		if err != nil {
			t.Fatal(err)
		}
		buyers, places[b] = append(buyers, b), st.Place
	}

	polls := func(withPlace bool, n int) {
		t.Helper()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				b := buyers[i%len(buyers)]
				var pl *Place
				if withPlace {
					p := places[b]
					pl = &p
				}
				if st, err := s.Poll(ctx, ev, b, pl); err != nil || st.State == "" {
					t.Errorf("poll of %s = %+v, %v", b, st, err)
				}
			})
		}
		wg.Wait()
	}
	calls.Store(0)
	polls(true, 200)
	if c := calls.Load(); c != 1 {
		t.Errorf("200 polls with their places within %s = %d Redis calls, want 1", ProgressMaxAge, c)
	}
	polls(true, 200)
	if c := calls.Load(); c != 1 {
		t.Errorf("200 more on the same instant = %d Redis calls in all, want still 1", c)
	}
	mu.Lock()
	clock = clock.Add(ProgressMaxAge)
	mu.Unlock()
	polls(true, 200)
	if c := calls.Load(); c != 2 {
		t.Errorf("after %s: %d Redis calls in all, want 2", ProgressMaxAge, c)
	}

	// Without places: the first lookup's call is held in Redis's client until
	// the others wait; they then go together, in one more call.
	calls.Store(0)
	gate := make(chan struct{})
	hook.gate.Store(&gate)
	var wg sync.WaitGroup
	wg.Go(func() { polls(false, 100) })
	testenv.Eventually(t, 10*time.Second, func() bool {
		first := hook.held.Load() // the buyers of the call held: those who came before it went
		s.mu.Lock()
		defer s.mu.Unlock()
		b := s.batches[ev.ID]
		return first > 0 && b != nil && int64(len(b.waiting)) == 100-first
	}, "every lookup waiting behind the first call")
	hook.gate.Store(nil)
	close(gate)
	wg.Wait()
	want := int64(2) // the first call, then one for all who came meanwhile
	if hook.held.Load() == 100 {
		want = 1 // all came before the first call went
	}
	if c := calls.Load(); c != want {
		t.Errorf("100 polls at once without a place, the first call carrying %d = %d Redis calls, want %d", hook.held.Load(), c, want)
	}

	private.Stop()
	mu.Lock()
	clock = clock.Add(ProgressMaxAge)
	mu.Unlock()
	p := places[buyers[0]]
	if _, err := s.Poll(ctx, ev, buyers[0], &p); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a poll with a place, Redis gone = %v, want ErrUnavailable", err)
	}
}

// countHook counts the commands a client sends; while gate holds a
// channel, the next command waits for it to close.
type countHook struct {
	n    *atomic.Int64
	gate atomic.Pointer[chan struct{}]
	held atomic.Int64 // the buyers of the script call the gate held
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		if g := h.gate.Swap(nil); g != nil {
			// EVALSHA sha 3 keys…, 6 arguments, then the buyers
			h.held.Store(int64(len(cmd.Args()) - 12))
			<-*g
		}
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestFarBuyersAreEstimated: after the draw, a buyer who joined before it
// and is far from her turn is told an estimate from her lottery score, with
// no call of her own, within a few standard deviations of her true place;
// those within LookupHorizon of their turn are asked about, and told exactly.
func TestFarBuyersAreEstimated(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	const n = 1000
	ev := roomEvent(1, testenv.RedisNow(t, rdb).Add(3*time.Second))
	places := make([]Place, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				st, err := s.Join(ctx, ev, fmt.Sprintf("early-%04d", i))
				if err != nil || st.Place.Drawn {
					t.Errorf("join %d = %+v, %v; want a place before the draw (too slow a machine?)", i, st, err)
				}
				places[i] = st.Place
			}
		})
	}
	wg.Wait()
	testenv.SleepUntilRedis(t, rdb, ev.OnSaleAt)
	var asked int
	for i, pl := range places {
		got, err := s.Poll(ctx, ev, pl.BuyerID, &pl)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Status(ctx, ev, pl.BuyerID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Place.Drawn {
			asked++
			if got.State != want.State || got.Position > want.Position {
				t.Errorf("buyer %d, asked about: %+v, Redis says %+v", i, got, want)
			}
			continue
		}
		f := float64(pl.Lottery) / (1 << 53)
		sigma := math.Sqrt(float64(n-int(pl.Queued)) * f * (1 - f))
		if want.Position <= int(LookupHorizon.Seconds()) || math.Abs(float64(got.Position-want.Position)) > 6*sigma+2 {
			t.Errorf("buyer %d estimated at %d, truly %d (σ %.1f)", i, got.Position, want.Position, sigma)
		}
	}
	t.Logf("%d of %d buyers asked about after the draw; the others estimated", asked, n)
	if asked < int(LookupHorizon.Seconds()) || asked > n/2 {
		t.Errorf("%d of %d asked about; want those within %s of their turn (at 1 a second), and no more than half", asked, n, LookupHorizon)
	}
}
