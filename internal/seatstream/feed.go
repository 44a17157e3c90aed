package seatstream

import (
	"context"
	"sync"
	"time"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/protect"
)

// feed reads one event's seat map every second while anyone watches it, and
// sends the changes to every watcher.
type feed struct {
	eventID string
	hub     *Hub
	cancel  context.CancelFunc

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	last *event.SeatMap
}

func (f *feed) run(ctx context.Context, every time.Duration) {
	protect.Every(ctx, every, f.read)
}

// read reads the seat map once and publishes it.
func (f *feed) read(ctx context.Context) {
	m, err := f.hub.src.SeatMap(ctx, f.eventID)
	if err != nil {
		return // the database's outage is reported by the reads that failed; watchers keep the last map
	}
	f.publish(m)
}

// publish sends the changes from the last map to m to every watcher; a watcher
// whose buffer is full is dropped (its channel closed) rather than waited for.
func (f *feed) publish(m *event.SeatMap) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m == f.last {
		return // the same snapshot
	}
	changed := changes(f.last, m)
	f.last = m
	if changed == nil {
		return
	}
	msg := Message{Changes: changed}
	for s := range f.subs {
		select {
		case s.c <- msg:
		default:
			f.dropLocked(s)
		}
	}
}

// join adds s, and sends it the latest map first, under the lock that publish
// holds: s gets every change after that map, and none before.
func (f *feed) join(s *Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs[s] = struct{}{}
	s.c <- Message{Snapshot: f.last} // the buffer is empty: never blocks
}

// drop removes s and closes its channel; it reports whether s was there.
func (f *feed) drop(s *Subscription) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropLocked(s)
}

func (f *feed) dropLocked(s *Subscription) bool {
	if _, ok := f.subs[s]; !ok {
		return false
	}
	delete(f.subs, s)
	close(s.c)
	f.hub.watchers.Dec()
	return true
}

func (f *feed) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs) == 0
}

// stop ends the feed's reads and drops every watcher.
func (f *feed) stop() {
	f.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		f.dropLocked(s)
	}
}
