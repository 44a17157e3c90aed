package seatstream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/seatstream"
)

// maps is a Source whose seat map a test sets: each set is a new snapshot, as
// event.Service's are.
type maps struct {
	mu    sync.Mutex
	m     map[string]*event.SeatMap
	reads int
	read  chan struct{} // a read was made (at most one signal pending)
}

func newMaps(eventID string, statuses ...event.SeatStatus) *maps {
	s := &maps{m: map[string]*event.SeatMap{}, read: make(chan struct{}, 1)}
	s.set(eventID, statuses...)
	return s
}

// set makes the event's map seats s1, s2, … with these statuses.
func (s *maps) set(eventID string, statuses ...event.SeatStatus) {
	m := &event.SeatMap{EventID: eventID, AsOf: time.Now()}
	for i, st := range statuses {
		m.Seats = append(m.Seats, event.Seat{ID: seatID(i), Section: "Floor", Row: "A", Number: i + 1, PriceCents: 100, Status: st})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[eventID] = m
}

func seatID(i int) string { return string(rune('a'+i)) + "-seat" }

func (s *maps) SeatMap(_ context.Context, eventID string) (*event.SeatMap, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	select {
	case s.read <- struct{}{}:
	default:
	}
	m, ok := s.m[eventID]
	if !ok {
		return nil, errkind.NotFoundf("no such event")
	}
	return m, nil
}

func (s *maps) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// waitReads waits until the source has been read n times in all.
func (s *maps) waitReads(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for s.readCount() < n {
		select {
		case <-s.read:
		case <-timeout:
			t.Fatalf("the source was read %d times in 10 s, want %d", s.readCount(), n)
		}
	}
}

// noReadsFor fails when the source is read more than allowed times within d.
func (s *maps) noReadsFor(t *testing.T, d time.Duration, allowed int) {
	t.Helper()
	select { // a signal left from before
	case <-s.read:
	default:
	}
	before := s.readCount()
	timeout := time.After(d)
	for {
		select {
		case <-s.read:
			if n := s.readCount() - before; n > allowed {
				t.Fatalf("the source was read %d more times, want at most %d", n, allowed)
			}
		case <-timeout:
			return
		}
	}
}

// seats is what a message says of each seat it names: all of them in a
// snapshot, those that changed in changes. It fails unless the message is
// exactly one of the two.
func seats(t *testing.T, m seatstream.Message) map[string]event.SeatStatus {
	t.Helper()
	if (m.Snapshot == nil) == (m.Changes == nil) {
		t.Fatalf("a message of a snapshot %v and changes %v: want exactly one", m.Snapshot, m.Changes)
	}
	return statusesOf(m)
}

// statusesOf is each seat a message names, with its status.
func statusesOf(m seatstream.Message) map[string]event.SeatStatus {
	out := map[string]event.SeatStatus{}
	if m.Snapshot != nil {
		for _, s := range m.Snapshot.Seats {
			out[s.ID] = s.Status
		}
	}
	if m.Changes != nil {
		for _, s := range m.Changes.Seats {
			out[s.ID] = s.Status
		}
	}
	return out
}

// kind is "snapshot" for the whole map, "changes" for the seats changed.
func kind(m seatstream.Message) string {
	if m.Snapshot != nil {
		return "snapshot"
	}
	return "changes"
}

// next is the subscription's next message, or a failure after a wait far
// longer than any feed's period.
func next(t *testing.T, sub *seatstream.Subscription) (seatstream.Message, bool) {
	t.Helper()
	select {
	case m, ok := <-sub.C:
		return m, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no message in 10 s")
		return seatstream.Message{}, false
	}
}

func TestAWatcherGetsTheWholeMapThenEachChange(t *testing.T) {
	src := newMaps("e1", event.Available, event.Available, event.Available)
	hub := seatstream.New(src, seatstream.Options{Every: time.Millisecond})
	defer hub.Close()
	sub, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	first, _ := next(t, sub)
	if kind(first) != "snapshot" || len(seats(t, first)) != 3 {
		t.Fatalf("first message %s %s, want the snapshot of 3 seats", kind(first), statusesOf(first))
	}

	src.set("e1", event.Held, event.Available, event.Sold)
	m, _ := next(t, sub)
	got := seats(t, m)
	if kind(m) != "changes" || len(got) != 2 || got[seatID(0)] != event.Held || got[seatID(2)] != event.Sold {
		t.Fatalf("message %s %s, want the changes of seats 0 (held) and 2 (sold) only", kind(m), statusesOf(m))
	}

	// A snapshot that changes no seat sends nothing; the next change is the
	// next message.
	src.set("e1", event.Held, event.Available, event.Sold)
	src.waitReads(t, src.readCount()+5) // the feed has read the unchanged map, several times
	src.set("e1", event.Available, event.Available, event.Sold)
	m, _ = next(t, sub)
	if got := seats(t, m); kind(m) != "changes" || len(got) != 1 || got[seatID(0)] != event.Available {
		t.Fatalf("message %s %s, want seat 0 available again, alone", kind(m), statusesOf(m))
	}
}

func TestAWatcherJoiningLateStartsFromTheLatestMap(t *testing.T) {
	src := newMaps("e1", event.Available, event.Available)
	hub := seatstream.New(src, seatstream.Options{Every: time.Millisecond})
	defer hub.Close()
	early, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	next(t, early)
	src.set("e1", event.Sold, event.Available)
	next(t, early) // the feed has the sold seat

	late, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	m, _ := next(t, late)
	if got := seats(t, m); kind(m) != "snapshot" || got[seatID(0)] != event.Sold {
		t.Fatalf("a late watcher's first message: %s %s, want the snapshot with seat 0 sold", kind(m), statusesOf(m))
	}
}

func TestASlowWatcherIsDroppedAndOthersKeepTheirs(t *testing.T) {
	src := newMaps("e1", event.Available)
	hub := seatstream.New(src, seatstream.Options{Every: time.Millisecond, Buffer: 2})
	defer hub.Close()
	slow, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	next(t, fast)

	// The slow watcher reads nothing; the fast one reads each change, so the
	// feed has published it before the next one.
	for _, st := range []event.SeatStatus{event.Held, event.Available, event.Held, event.Available} {
		src.set("e1", st)
		m, ok := next(t, fast)
		if !ok || seats(t, m)[seatID(0)] != st {
			t.Fatalf("the fast watcher got %s (open %v), want seat 0 %s", statusesOf(m), ok, st)
		}
	}
	// Its buffer of 2 held the snapshot and one change; the next change
	// dropped it: what it had is still there, then its channel is closed.
	var got int
	for range slow.C {
		got++
	}
	if got != 2 {
		t.Errorf("the slow watcher read %d messages before its channel closed, want 2 (its buffer)", got)
	}
}

func TestClosingTheHubEndsEveryWatcherAndRefusesNewOnes(t *testing.T) {
	src := newMaps("e1", event.Available)
	hub := seatstream.New(src, seatstream.Options{Every: time.Millisecond})
	var subs []*seatstream.Subscription
	for range 3 {
		sub, err := hub.Subscribe(context.Background(), "e1")
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	hub.Close()
	for _, sub := range subs {
		n := 0
		for range sub.C {
			n++
		}
		if n != 1 {
			t.Errorf("a watcher read %d messages before its channel closed, want 1 (the snapshot)", n)
		}
		sub.Close() // after the hub's close: changes nothing, twice
		sub.Close()
	}
	if _, err := hub.Subscribe(context.Background(), "e1"); !errors.Is(err, seatstream.ErrClosed) {
		t.Errorf("Subscribe after Close: %v, want ErrClosed", err)
	}
	// No feed reads any more (one read may have been under way).
	src.noReadsFor(t, 100*time.Millisecond, 1)
}

func TestTheLastWatcherLeavingStopsTheFeed(t *testing.T) {
	src := newMaps("e1", event.Available)
	hub := seatstream.New(src, seatstream.Options{Every: time.Millisecond})
	defer hub.Close()
	sub, err := hub.Subscribe(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	next(t, sub)
	src.waitReads(t, 5) // the feed runs
	sub.Close()
	if _, ok := <-sub.C; ok {
		t.Fatal("a closed subscription's channel is still open")
	}
	src.noReadsFor(t, 100*time.Millisecond, 1) // one read may have been under way as it left
}

func TestSubscribingToAnUnknownEventIsTheSourcesError(t *testing.T) {
	hub := seatstream.New(newMaps("e1", event.Available), seatstream.Options{})
	defer hub.Close()
	if _, err := hub.Subscribe(context.Background(), "nope"); !errors.Is(err, errkind.NotFound) {
		t.Errorf("Subscribe(unknown) = %v, want errkind.NotFound", err)
	}
}
