package waitroom

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAPausedRoomAdmitsNobodyAndANewRateRunsFromTheChange: 200 buyers queue
// before a room of 20 a second opens. Paused, it admits nobody however long
// the pause (by Redis's clock), and its waiting buyers are told they wait
// with no estimate, a new joiner too; a new rate set while paused changes
// nothing until the resume; from the resume on it admits at the new rate,
// the interval that was running when it paused carried over: after x
// seconds, ⌊x·rate⌋ more, or one more.
func TestAPausedRoomAdmitsNobodyAndANewRateRunsFromTheChange(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	ev := roomEvent(20, testenv.RedisNow(t, rdb).Add(500*time.Millisecond))
	for i := range 200 {
		if _, err := s.Join(ctx, ev, fmt.Sprintf("buyer-%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.SleepUntilRedis(t, rdb, slot(ev, 5))
	yes, no, faster := true, false, 50
	before, err := s.Change(ctx, ev, Control{Paused: &yes})
	if err != nil || !before.Paused || before.Rate != 20 || before.ChangedAt.IsZero() {
		t.Fatalf("pausing = %+v, %v; want the room paused at 20 a second", before, err)
	}
	if before.Admitted < 5 || before.Admitted > admittedBy(ev, before.Now) {
		t.Fatalf("admitted %d by the pause at %s; want ⌊t·rate⌋ = %d", before.Admitted, before.Now, admittedBy(ev, before.Now))
	}
	testenv.SleepUntilRedis(t, rdb, before.Now.Add(400*time.Millisecond))
	p, err := s.Progress(ctx, ev)
	if err != nil || p.Admitted != before.Admitted || !p.Paused {
		t.Fatalf("400 ms into the pause: %+v, %v; want still %d admitted", p, err, before.Admitted)
	}
	for _, b := range []string{"buyer-199", "late"} {
		st, err := s.Join(ctx, ev, b)
		if err != nil || st.State != Waiting || !st.Paused || st.EstimatedWait != 0 || st.Position < 1 {
			t.Fatalf("%s in the paused room: %+v, %v; want waiting, paused, no estimate", b, st, err)
		}
	}
	if p, err = s.Change(ctx, ev, Control{Rate: &faster}); err != nil || p.Admitted != before.Admitted || p.Rate != faster || !p.Paused {
		t.Fatalf("a new rate while paused: %+v, %v; want 50 a second, still paused, still %d admitted", p, err, before.Admitted)
	}
	resumed, err := s.Change(ctx, ev, Control{Paused: &no})
	if err != nil || resumed.Paused || resumed.Admitted != before.Admitted {
		t.Fatalf("resuming = %+v, %v", resumed, err)
	}
	testenv.SleepUntilRedis(t, rdb, resumed.Now.Add(time.Second))
	p, err = s.Progress(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	x := p.Now.Sub(resumed.ChangedAt)
	least := before.Admitted + int(x.Microseconds()*int64(faster)/1e6)
	if p.Admitted < least || p.Admitted > least+1 {
		t.Fatalf("%s after the resume at 50 a second: %d admitted; want %d or %d", x, p.Admitted, least, least+1)
	}
	st, err := s.Status(ctx, ev, "late") // behind the 200 early joiners
	if err != nil || st.State != Waiting || st.Paused || st.EstimatedWait <= 0 {
		t.Fatalf("after the resume: %+v, %v; want an estimate again", st, err)
	}
}

// TestChangesRacingBuyersAdmitNoMoreThanTheSchedule: while 20 goroutines
// pause, resume and change the rate of a room as fast as they can and 20
// others join and ask, the room never admits more than the fastest rate
// set allows since the sale opened, and every change is answered.
func TestChangesRacingBuyersAdmitNoMoreThanTheSchedule(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, DefaultAdmission)
	ctx := context.Background()
	ev := roomEvent(100, testenv.RedisNow(t, rdb).Add(-time.Second))
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				var err error
				switch {
				case g%2 == 0:
					rate, paused := 50+g+i, i%3 == 0
					_, err = s.Change(ctx, ev, Control{Rate: &rate, Paused: &paused})
				default:
					_, err = s.Join(ctx, ev, fmt.Sprintf("buyer-%02d-%02d", g, i))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p, err := s.Progress(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	// Every buyer joined after the sale opened; at most 100 a second (the
	// fastest rate set is 50+38+24 = 112) since the first joined.
	most := int(p.Now.Sub(ev.OnSaleAt).Seconds()*112) + 1
	if p.Admitted > most || p.Queued != 500 {
		t.Fatalf("progress %+v; want 500 queued and at most %d admitted", p, most)
	}
}

// TestChangesAreChecked: a change with nothing in it or a rate out of range
// is refused before Redis; an event without a room is ErrNoRoom.
func TestChangesAreChecked(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newService(t, DefaultAdmission)
	ev := roomEvent(10, testenv.RedisNow(t, rdb))
	zero, huge := 0, MaxRate+1
	for _, c := range []Control{{}, {Rate: &zero}, {Rate: &huge}} {
		if _, err := s.Change(context.Background(), ev, c); !errors.Is(err, errkind.Invalid) {
			t.Errorf("change %+v: %v; want invalid", c, err)
		}
	}
	ev.WaitingRoom = nil
	one := 1
	if _, err := s.Change(context.Background(), ev, Control{Rate: &one}); !errors.Is(err, ErrNoRoom) {
		t.Errorf("a room of an event without one: %v; want ErrNoRoom", err)
	}
}
