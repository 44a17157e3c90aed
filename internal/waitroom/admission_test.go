package waitroom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAdmissionLapses: an admission lasts its length, from the moment it is
// made; after it the buyer cannot hold, is no longer queued, and joining again
// queues her anew at the back.
func TestAdmissionLapses(t *testing.T) {
	t.Parallel()
	s, rdb, prefix := newService(t, time.Second)
	ctx := context.Background()
	ev := roomEvent(1000, time.Now().Add(-time.Minute))
	if err := s.CheckAdmitted(ctx, ev, "ada"); !errors.Is(err, ErrNotAdmitted) || !strings.Contains(err.Error(), "not joined") {
		t.Fatalf("CheckAdmitted before joining = %v, want ErrNotAdmitted", err)
	}
	st, err := s.Join(ctx, ev, "ada")
	if err != nil || st.State != Admitted || !st.AdmittedUntil.Equal(st.Now.Add(time.Second)) {
		t.Fatalf("joining a quiet room = %+v, %v; want admitted at once, for 1 s", st, err)
	}
	if err := s.CheckAdmitted(ctx, ev, "ada"); err != nil {
		t.Fatalf("CheckAdmitted while admitted = %v", err)
	}
	if again, err := s.Join(ctx, ev, "ada"); err != nil || !again.AdmittedUntil.Equal(st.AdmittedUntil) {
		t.Fatalf("joining again while admitted = %+v, %v; want the same admission", again, err)
	}
	if _, err := s.Join(ctx, ev, "bob"); err != nil {
		t.Fatal(err)
	}

	testenv.SleepUntilRedis(t, rdb, st.AdmittedUntil)
	if err := s.CheckAdmitted(ctx, ev, "ada"); !errors.Is(err, ErrNotAdmitted) || !strings.Contains(err.Error(), "lapsed") {
		t.Errorf("CheckAdmitted after the admission = %v, want ErrNotAdmitted saying it lapsed", err)
	}
	if _, err := s.Status(ctx, ev, "ada"); !errors.Is(err, errkind.NotFound) {
		t.Errorf("Status after the admission = %v, want errkind.NotFound", err)
	}
	next, err := s.Join(ctx, ev, "ada")
	if err != nil || next.State != Admitted || !next.AdmittedUntil.After(st.AdmittedUntil) {
		t.Fatalf("joining after the admission lapsed = %+v, %v; want a new admission", next, err)
	}
	if p, err := s.Progress(ctx, ev); err != nil || p.Queued != 2 || p.Admitted != 2 {
		t.Errorf("progress = %+v, %v; want Ada (once) and Bob, both admitted", p, err)
	}
	checkTTLs(t, rdb, prefix, 3)
}

// TestLateHerdIsPaced: admissions unused while the room was quiet do not pile
// up. A herd arriving an hour into the sale is let in at the room's rate from
// its first buyer on, not all at once, and each is told exactly when.
func TestLateHerdIsPaced(t *testing.T) {
	t.Parallel()
	s, _, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	ev := roomEvent(10, time.Now().Add(-time.Hour))
	var first Status
	for i := range 30 {
		st, err := s.Join(ctx, ev, fmt.Sprintf("buyer-%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if first = st; st.State != Admitted {
				t.Fatalf("the first of the herd = %+v, want admitted at once", st)
			}
			continue
		}
		// The k-th of the herd is admitted k/rate after the first.
		eta := first.Now.Add(time.Duration(i) * 100 * time.Millisecond)
		if st.State == Waiting && !st.Now.Add(st.EstimatedWait).Equal(eta) || st.State == Admitted && st.Now.Before(eta) {
			t.Fatalf("buyer %d of the herd = %+v; want admitted at %s", i, st, eta)
		}
	}
	p, err := s.Progress(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if most := 1 + int(p.Now.Sub(first.Now)*10/time.Second); p.Admitted > most || p.Admitted == 30 {
		t.Errorf("%s after the herd arrived, %d of 30 admitted; want at most %d", p.Now.Sub(first.Now), p.Admitted, most)
	}
}

// TestConcurrentJoinsOfOneBuyer: 20 joins of one buyer at once queue her once,
// at one place.
func TestConcurrentJoinsOfOneBuyer(t *testing.T) {
	t.Parallel()
	s, _, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	ev := roomEvent(1, time.Now().Add(time.Hour))
	for _, b := range []string{"ada", "bob", "cy"} {
		if _, err := s.Join(ctx, ev, b); err != nil {
			t.Fatal(err)
		}
	}
	positions := make(chan int, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			st, err := s.Join(ctx, ev, "dee")
			if err != nil {
				t.Error(err)
			}
			positions <- st.Position
		})
	}
	wg.Wait()
	close(positions)
	first := <-positions
	for p := range positions {
		if p != first {
			t.Errorf("concurrent joins of one buyer gave positions %d and %d", first, p)
		}
	}
	if p, err := s.Progress(ctx, ev); err != nil || p.Queued != 4 {
		t.Errorf("progress = %+v, %v; want 4 queued", p, err)
	}
}

// TestWaitingBuyerIsNotAdmitted: a buyer behind others cannot hold yet, and
// the refusal says where she stands.
func TestWaitingBuyerIsNotAdmitted(t *testing.T) {
	t.Parallel()
	s, _, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	ev := roomEvent(1, time.Now().Add(time.Hour))
	for _, b := range []string{"ada", "bob"} {
		if _, err := s.Join(ctx, ev, b); err != nil {
			t.Fatal(err)
		}
	}
	err := s.CheckAdmitted(ctx, ev, "bob")
	if !errors.Is(err, ErrNotAdmitted) || !strings.Contains(err.Error(), "in its queue") {
		t.Errorf("CheckAdmitted while waiting = %v", err)
	}
}

// TestNoRoomAndRedisDown: an event without a room never reaches Redis; with
// Redis unreachable the room fails closed, and the breaker then refuses
// without calling it.
func TestNoRoomAndRedisDown(t *testing.T) {
	t.Parallel()
	opts, err := redis.ParseURL(testenv.DeadRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	s := New(rdb, Options{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	plain := event.Info{ID: ids.New(), OnSaleAt: time.Now()}
	if err := s.CheckAdmitted(ctx, plain, "ada"); err != nil {
		t.Errorf("CheckAdmitted without a room = %v, want nil", err)
	}
	if _, err := s.Join(ctx, plain, "ada"); !errors.Is(err, ErrNoRoom) || CheckRoom(plain) == nil {
		t.Errorf("Join without a room = %v, want ErrNoRoom", err)
	}
	ev := roomEvent(10, time.Now())
	for i := range 6 {
		_, err := s.Join(ctx, ev, "ada")
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("join %d with Redis down = %v, want ErrUnavailable", i+1, err)
		}
		if i == 5 && !strings.Contains(err.Error(), "open") {
			t.Errorf("the 6th failure = %v, want the breaker open", err)
		}
	}
	if err := s.CheckAdmitted(ctx, ev, "ada"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("CheckAdmitted with Redis down = %v, want ErrUnavailable", err)
	}
}

// checkTTLs fails unless want keys live under prefix, each with a time to live.
func checkTTLs(t *testing.T, rdb redis.UniversalClient, prefix string, want int) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix+"wr:{") {
			t.Errorf("key %s is not under %swr:{<event>}", k, prefix)
		}
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("key %s has no time to live (%s)", k, ttl)
		}
	}
	if len(keys) != want {
		t.Errorf("%d keys %v, want %d", len(keys), keys, want)
	}
}
