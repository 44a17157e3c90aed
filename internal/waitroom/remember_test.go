package waitroom

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestAdmissionsAreRemembered: an admission read once (by a join here) is
// honoured from memory until it ends by the instance's clock, with no call to
// the room; past its end the room is asked again. A refusal is remembered
// apart (TestRefusalsAreRememberedBriefly).
func TestAdmissionsAreRemembered(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	c := testenv.CountScripts(rdb)
	clock := testenv.NewClock(time.Now())
	s := New(c, Options{Prefix: prefix, Timeout: 5 * time.Second, Admission: time.Minute, Clock: clock.Now})
	ctx := context.Background()
	ev := roomEvent(1, time.Now().Add(-time.Minute))

	st, err := s.Join(ctx, ev, "ada")
	if err != nil || st.State != Admitted {
		t.Fatalf("the first to join a quiet room = %+v, %v; want admitted", st, err)
	}
	if _, err := s.Join(ctx, ev, "bob"); err != nil { // behind Ada: waits about a second
		t.Fatal(err)
	}
	before := c.Calls()
	for range 100 {
		if err := s.CheckAdmitted(ctx, ev, "ada"); err != nil {
			t.Fatalf("CheckAdmitted while admitted = %v", err)
		}
	}
	if n := c.Calls() - before; n != 0 {
		t.Fatalf("100 checks of an admission read before made %d room calls, want 0", n)
	}
	if err := s.CheckAdmitted(ctx, ev, "cy"); !errors.Is(err, ErrNotAdmitted) {
		t.Fatalf("CheckAdmitted of a buyer who never joined = %v", err)
	}

	// Her admission ends a minute after it was made, as the call that read it
	// began: a moment before that, still from memory; at it, the room again.
	clock.Add(st.AdmittedUntil.Sub(st.Now) - time.Millisecond)
	before = c.Calls()
	if err := s.CheckAdmitted(ctx, ev, "ada"); err != nil || c.Calls() != before {
		t.Fatalf("a moment before the end: %v, %d calls; want admitted from memory", err, c.Calls()-before)
	}
	clock.Add(time.Millisecond)
	if err := s.CheckAdmitted(ctx, ev, "ada"); c.Calls() != before+1 {
		t.Fatalf("at the end of the remembered admission: %v after %d room calls, want 1", err, c.Calls()-before)
	}

	s.Forget(ev.ID, "ada")
	if err := s.CheckAdmitted(ctx, ev, "ada"); err != nil || c.Calls() != before+2 {
		t.Fatalf("after Forget: %v after %d room calls, want 1 more", err, c.Calls()-before-1)
	}
}

// TestRememberedAdmissionsAreBounded: an instance remembers at most
// MaxAdmissions; past that, an admission it cannot keep is asked about each
// time, and ended ones make room.
func TestRememberedAdmissionsAreBounded(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	clock := testenv.NewClock(time.Now())
	s := New(rdb, Options{Prefix: prefix, Timeout: 5 * time.Second, Admission: time.Minute,
		MaxAdmissions: 32, Clock: clock.Now})
	ctx := context.Background()
	ev := roomEvent(100_000, time.Now().Add(-time.Minute))
	for i := range 200 {
		if st, err := s.Join(ctx, ev, fmt.Sprintf("buyer-%03d", i)); err != nil || st.State != Admitted {
			t.Fatalf("join %d = %+v, %v", i, st, err)
		}
	}
	if n := s.Remembered(); n != 32 { // 16 shards of 2: 200 buyers fill every one
		t.Fatalf("%d admissions remembered of 200, want 32, the bound", n)
	}
	clock.Add(2 * time.Minute) // every remembered one has ended
	late := roomEvent(100_000, time.Now().Add(-time.Minute))
	if _, err := s.Join(ctx, late, "late"); err != nil {
		t.Fatal(err)
	}
	if refusal, ok := s.admitted.current(late.ID, "late"); !ok || refusal != nil || s.Remembered() > 32 {
		t.Fatalf("an admission read once the others ended: remembered %v, %v (%d in all); want it kept, at most 32",
			ok, refusal, s.Remembered())
	}
}

// TestRefusalsAreRememberedBriefly: a bot that never joined checks 100 times
// in a moment and costs the room one call, then one more a RefusalMemory
// later; a waiting buyer whose turn is nearer than that is refused from
// memory only until her turn; a join here ends a remembered refusal, and a
// refusal never becomes an admission.
func TestRefusalsAreRememberedBriefly(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	c := testenv.CountScripts(rdb)
	clock := testenv.NewClock(time.Now())
	s := New(c, Options{Prefix: prefix, Timeout: 5 * time.Second, Clock: clock.Now})
	ctx := context.Background()
	ev := roomEvent(4, time.Now().Add(-time.Minute))
	checks := func(buyer string, n int) (calls int64) {
		t.Helper()
		before := c.Calls()
		for range n {
			if err := s.CheckAdmitted(ctx, ev, buyer); !errors.Is(err, ErrNotAdmitted) {
				t.Fatalf("CheckAdmitted of %s = %v, want ErrNotAdmitted", buyer, err)
			}
		}
		return c.Calls() - before
	}
	if n := checks("bot", 100); n != 1 {
		t.Fatalf("100 checks of a bot in a moment made %d room calls, want 1", n)
	}
	clock.Add(RefusalMemory - time.Millisecond)
	if n := checks("bot", 10); n != 0 {
		t.Fatalf("a moment before RefusalMemory: %d room calls, want 0", n)
	}
	clock.Add(time.Millisecond)
	if n := checks("bot", 10); n != 1 {
		t.Fatalf("at RefusalMemory: %d room calls, want 1", n)
	}

	// At 4 a second, the first is admitted at once and the second waits
	// about 250 ms: her refusal is remembered until then, no longer.
	if _, err := s.Join(ctx, ev, "ada"); err != nil {
		t.Fatal(err)
	}
	st, err := s.Join(ctx, ev, "bob")
	if err != nil || st.State != Waiting || st.EstimatedWait <= 0 || st.EstimatedWait > 250*time.Millisecond {
		t.Fatalf("the second to join at 4 a second = %+v, %v; want waiting at most 250 ms", st, err)
	}
	clock.Add(time.Millisecond) // her check comes a moment after her join
	if n := checks("bob", 5); n != 1 {
		t.Fatalf("5 checks of a waiting buyer made %d room calls, want 1", n)
	}
	clock.Add(st.EstimatedWait)
	if refusal, ok := s.admitted.current(ev.ID, "bob"); ok {
		t.Fatalf("at her turn her refusal is still remembered: %v", refusal)
	}

	// The bot joins here: its refusal ends at once. The room is quiet
	// again by Redis's clock once Bob's turn has passed.
	testenv.SleepUntilRedis(t, rdb, st.Now.Add(st.EstimatedWait+250*time.Millisecond))
	if _, ok := s.admitted.current(ev.ID, "bot"); !ok {
		t.Fatal("the bot's refusal is not remembered before its join")
	}
	joined, err := s.Join(ctx, ev, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if refusal, ok := s.admitted.current(ev.ID, "bot"); ok && refusal != nil {
		t.Fatalf("after joining here (%+v), the bot is still refused from memory: %v", joined, refusal)
	}
}
