package event

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

func TestRowLabel(t *testing.T) {
	for i, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA", 99: "CV", 701: "ZZ", 702: "AAA"} {
		if got := RowLabel(i); got != want {
			t.Errorf("RowLabel(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestSnapshotsFetchOncePerMaxAge: 100 concurrent readers of one key cause one
// fetch; a reader after maxAge causes the next; an error is not kept.
func TestSnapshotsFetchOncePerMaxAge(t *testing.T) {
	t.Parallel()
	var fetches atomic.Int64
	fail := atomic.Bool{}
	release := make(chan struct{})
	s := newSnapshots(200*time.Millisecond, func(ctx context.Context, key string) (int64, error) {
		n := fetches.Add(1)
		<-release
		if fail.Load() {
			return 0, errors.New("boom")
		}
		return n, nil
	})
	clock := newClock()
	s.now = clock.Now
	var wg sync.WaitGroup
	got := make([]int64, 100)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.get(context.Background(), "e1")
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	// Those that arrive while the fetch runs wait for it, the others find
	// its value fresh (the clock stands still): none fetches again.
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != 1 {
			t.Fatalf("reader %d got %d, want the first fetch's 1", i, v)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for 100 concurrent readers, want 1", n)
	}
	if v, _ := s.get(context.Background(), "e1"); v != 1 || fetches.Load() != 1 {
		t.Errorf("a fresh snapshot was fetched again")
	}
	if v, _ := s.get(context.Background(), "e2"); v != 2 {
		t.Errorf("another key shares the snapshot: %d", v)
	}
	clock.Add(199 * time.Millisecond)
	if v, _ := s.get(context.Background(), "e1"); v != 1 {
		t.Errorf("a snapshot younger than maxAge was fetched again: %d", v)
	}
	clock.Add(time.Millisecond)
	if v, _ := s.get(context.Background(), "e1"); v != 3 {
		t.Errorf("after maxAge got %d, want a new fetch (3)", v)
	}

	clock.Add(200 * time.Millisecond)
	fail.Store(true)
	if _, err := s.get(context.Background(), "e1"); err == nil {
		t.Fatal("the failing fetch returned no error")
	}
	fail.Store(false)
	if v, err := s.get(context.Background(), "e1"); err != nil || v != 5 {
		t.Errorf("after a failed fetch got %d, %v; want a new fetch (5)", v, err)
	}
}

// TestSnapshotsWaiterMayLeave: a waiting reader whose context ends leaves; the
// fetch goes on for the others, whoever started it.
func TestSnapshotsWaiterMayLeave(t *testing.T) {
	t.Parallel()
	release, started := make(chan struct{}), make(chan struct{})
	s := newSnapshots(time.Second, func(ctx context.Context, key string) (string, error) {
		close(started)
		<-release
		return "map", ctx.Err()
	})
	leader, cancelLeader := context.WithCancel(context.Background())
	done := make(chan string)
	go func() {
		v, _ := s.get(leader, "e")
		done <- v
	}()
	<-started // the leader's fetch runs
	waiter, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.get(waiter, "e"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiter whose context ended got %v", err)
	}
	cancelLeader()
	close(release)
	if v := <-done; v != "map" {
		t.Errorf("the fetch was cancelled with its starter: %q", v)
	}
}

// newClock is a clock that moves only when a test moves it.
func newClock() *testenv.Clock { return testenv.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) }
