package waitroom

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// newService is a Service on the shared Redis under a prefix of the test's
// own, with a deadline no loaded test machine reaches.
func newService(t *testing.T, admission time.Duration) (*Service, redis.UniversalClient, string) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	return New(rdb, Options{Prefix: prefix, Timeout: 5 * time.Second, Admission: admission}), rdb, prefix
}

// roomEvent is an event with a waiting room admitting rate a second.
func roomEvent(rate int, onSale time.Time) event.Info {
	return event.Info{ID: ids.New(), OnSaleAt: onSale.Truncate(time.Microsecond).UTC(),
		WaitingRoom: &event.WaitingRoom{AdmitPerSecond: rate}}
}

// admittedBy is how many early joiners a room of rate admits by now:
// ⌊(now − on_sale_at)·rate⌋, never more.
func admittedBy(ev event.Info, now time.Time) int {
	return int(max(now.Sub(ev.OnSaleAt).Microseconds(), 0) * int64(ev.WaitingRoom.AdmitPerSecond) / 1e6)
}

// slot is the moment of the k-th admission (1-based) of a room whose buyers
// were all queued before it opened: on_sale_at + k/rate.
func slot(ev event.Info, k int) time.Time {
	return ev.OnSaleAt.Add(time.Duration(k) * time.Second / time.Duration(ev.WaitingRoom.AdmitPerSecond))
}

// TestThousandEarlyJoiners: 1,000 buyers join before the sale at 100 a second.
// After t seconds exactly ⌊100·t⌋ are admitted (by Redis's clock), in an order
// that is not the join order; later joiners queue behind every early one; the
// positions and waits reported are exact; joining again keeps one's place.
func TestThousandEarlyJoiners(t *testing.T) {
	t.Parallel()
	s, rdb, prefix := newService(t, DefaultAdmission)
	ctx := context.Background()
	const n, rate = 1000, 100
	ev := roomEvent(rate, testenv.RedisNow(t, rdb).Add(3*time.Second))

	// 8 at a time; the join order is the order of Redis's clock at each join.
	type joined struct {
		buyer string
		at    time.Time
	}
	joins := make([]joined, n)
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				b := fmt.Sprintf("early-%04d", i)
				st, err := s.Join(ctx, ev, b)
				switch {
				case err != nil:
					errs <- err
				case !st.Now.Before(ev.OnSaleAt):
					errs <- fmt.Errorf("%s joined at %s, after the sale opened at %s: too slow a machine for this test", b, st.Now, ev.OnSaleAt)
				case st.State != Waiting || st.Position < 1 || st.Position > n ||
					st.EstimatedWait != slot(ev, st.Position).Sub(st.Now):
					errs <- fmt.Errorf("%s joining = %+v; want waiting, to be admitted at on_sale_at + position/rate", b, st)
				}
				joins[i] = joined{b, st.Now}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d joins took %s (the sale opens 3 s after the first)", n, time.Since(began))
	slices.SortStableFunc(joins, func(a, b joined) int { return a.at.Compare(b.at) })
	buyers := make([]string, n) // in join order
	for i, j := range joins {
		buyers[i] = j.buyer
	}

	for _, b := range buyers[:20] {
		before, err := s.Status(ctx, ev, b)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Join(ctx, ev, b)
		if err != nil || again.Position != before.Position {
			t.Fatalf("%s joined again: position %d (%v), was %d", b, again.Position, err, before.Position)
		}
	}

	testenv.SleepUntilRedis(t, rdb, ev.OnSaleAt.Add(2500*time.Millisecond))
	p, err := s.Progress(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if want := min(n, admittedBy(ev, p.Now)); p.Queued != n || p.Admitted != want || p.Admitted < 250 {
		t.Fatalf("%s after the sale opened: %+v; want %d of %d admitted (100 a second, never more)",
			p.Now.Sub(ev.OnSaleAt), p, want, n)
	}

	// Later joiners: behind all 1,000, with exact positions and waits.
	for k := 1; k <= 5; k++ {
		st, err := s.Join(ctx, ev, fmt.Sprintf("late-%d", k))
		if err != nil {
			t.Fatal(err)
		}
		if want := n + k - admittedBy(ev, st.Now); st.State != Waiting || st.Position != want ||
			st.EstimatedWait != slot(ev, n+k).Sub(st.Now) {
			t.Fatalf("late joiner %d = %+v; want waiting at %d, admitted at slot %d", k, st, want, n+k)
		}
	}

	// Every early joiner, asked one after another while admissions go on: the
	// admitted ones at exactly the slots on_sale_at + k/rate, in an order that
	// is not the join order; the others waiting ahead of the late joiners. A
	// waiting buyer's slot is the number admitted when she asked plus her
	// position. The 1,000 slots must be 1 … 1,000, each once.
	admittedAt := map[int]int{}    // slot → join index
	slots := make(map[int]bool, n) // 1-based: the k-th admission
	for i, b := range buyers {
		st, err := s.Status(ctx, ev, b)
		var k int
		switch {
		case err != nil:
			t.Fatal(err)
		case st.State == Admitted:
			at := st.AdmittedUntil.Add(-DefaultAdmission)
			k = int(at.Sub(ev.OnSaleAt) * rate / time.Second)
			if !at.Equal(slot(ev, k)) {
				t.Fatalf("%s admitted at %s, not at a slot on_sale_at + k/rate", b, at)
			}
			admittedAt[k] = i
		default:
			k = admittedBy(ev, st.Now) + st.Position
		}
		if k < 1 || k > n || slots[k] {
			t.Fatalf("%s = %+v: slot %d is behind the late joiners or taken by another early one", b, st, k)
		}
		slots[k] = true
	}
	if len(admittedAt) < p.Admitted {
		t.Fatalf("%d admitted, want at least the %d of before", len(admittedAt), p.Admitted)
	}
	var order []int // join indices, in order of admission
	for k := 1; k <= n; k++ {
		if i, ok := admittedAt[k]; ok {
			order = append(order, i)
		}
	}
	if slices.IsSorted(order) {
		t.Error("early joiners were admitted in join order; they should be a lottery")
	}
	if !slices.ContainsFunc(order[:100], func(i int) bool { return i >= n/2 }) {
		t.Errorf("the first 100 admitted all joined in the first half: %v", order[:100])
	}
	checkTTLs(t, rdb, prefix, 3)
}

// joinAll joins the buyers in turn while the sale has not opened: how many
// joined before it, and the first join that failed or came after it.
func joinAll(ctx context.Context, s *Service, ev event.Info, buyers []string) (int, Status, error) {
	for i, b := range buyers {
		if st, err := s.Join(ctx, ev, b); err != nil || !st.Now.Before(ev.OnSaleAt) {
			return i, st, err
		}
	}
	return len(buyers), Status{}, nil
}

// TestLateJoinersAdmittedAfterEarlyOnes: 20 buyers who join once the sale has
// opened are admitted after all 100 who joined before it, in their join order,
// and no two admissions are closer than 1/rate.
func TestLateJoinersAdmittedAfterEarlyOnes(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	var early, late []string
	for i := range 100 {
		early = append(early, fmt.Sprintf("early-%03d", i))
	}
	// Every early join must land before the sale opens: when a busy machine
	// takes longer than the lead, the room is made again (a new event) with
	// twice the lead.
	var ev event.Info
	for lead := time.Second; ; lead *= 2 {
		ev = roomEvent(200, testenv.RedisNow(t, rdb).Add(lead))
		i, st, err := joinAll(ctx, s, ev, early)
		if i == len(early) {
			break
		}
		if err != nil || lead > 30*time.Second {
			t.Fatalf("early join %d = %+v, %v: want it before the sale opens", i, st, err)
		}
		t.Logf("early join %d came %s after the sale opened (%s after the event was made): again, with %s",
			i, st.Now.Sub(ev.OnSaleAt), lead, 2*lead)
	}
	testenv.SleepUntilRedis(t, rdb, ev.OnSaleAt.Add(100*time.Millisecond))
	for i := range 20 {
		late = append(late, fmt.Sprintf("late-%02d", i))
		if st, err := s.Join(ctx, ev, late[i]); err != nil || st.State != Waiting {
			t.Fatalf("late join %d = %+v, %v; want waiting", i, st, err)
		}
	}
	testenv.SleepUntilRedis(t, rdb, slot(ev, 120))
	moment := func(b string) time.Time {
		st, err := s.Status(ctx, ev, b)
		if err != nil || st.State != Admitted {
			t.Fatalf("%s at %s = %+v, %v; want admitted", b, st.Now, st, err)
		}
		return st.AdmittedUntil.Add(-DefaultAdmission)
	}
	var earlyAt []time.Time
	for _, b := range early {
		earlyAt = append(earlyAt, moment(b))
	}
	slices.SortFunc(earlyAt, time.Time.Compare)
	for k, at := range earlyAt {
		if !at.Equal(slot(ev, k+1)) {
			t.Fatalf("the %d-th early admission at %s, want %s", k+1, at, slot(ev, k+1))
		}
	}
	for i, b := range late {
		if at := moment(b); !at.Equal(slot(ev, 101+i)) {
			t.Errorf("late joiner %d admitted at %s, want %s: after every early joiner, in join order, 5 ms apart",
				i, at, slot(ev, 101+i))
		}
	}
}
