// Package seatstream pushes an event's seat-map changes to everyone watching
// it, for the live seat map of the browser (GET /v1/events/{id}/seats/stream).
//
// However many watch an event, one feed per event and instance reads its seat
// map from the event service's snapshot once a second (the snapshot every
// reader of the seat map shares: a thousand viewers add no query of their own)
// and sends each watcher only the seats whose status changed, one Changes
// shared by all. A watcher starts with the whole map, then gets every change after it,
// with no gap. A watcher that cannot keep up is dropped rather than waited
// for (its browser reconnects and starts again from a whole map).
//
// It owns no table, no rule and no wire format: it only watches
// internal/event's snapshots, and says what changed in Go values that
// internal/httpapi encodes.
package seatstream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/metrics"
)

// Source is where seat maps come from (*event.Service).
type Source interface {
	// SeatMap returns the event's seat map from a snapshot at most 1 s old.
	SeatMap(ctx context.Context, eventID string) (*event.SeatMap, error)
}

// Message is one thing a watcher is told: exactly one of its fields is set.
// Both point to values shared by every watcher: never modify them.
type Message struct {
	Snapshot *event.SeatMap // the whole map: a watcher's first message
	Changes  *Changes       // the seats whose status changed since the message before
}

// Changes lists the seats of an event whose status changed from one seat map
// to the next, as of the newer one.
type Changes struct {
	EventID string
	AsOf    time.Time
	Seats   []SeatChange
}

// SeatChange is one seat's new status.
type SeatChange struct {
	ID     string
	Status event.SeatStatus
}

// ErrClosed is returned by Subscribe once the hub is closed (shutting down).
var ErrClosed = errors.New("seatstream: the hub is closed")

// Hub keeps one feed per watched event.
type Hub struct {
	src      Source
	every    time.Duration
	buffered int

	mu     sync.Mutex
	feeds  map[string]*feed
	closed bool

	watchers prometheus.Gauge
}

// Options tune a Hub; zero values take the defaults.
type Options struct {
	Every      time.Duration // how often a feed looks at the map: half of event.SnapshotMaxAge
	Buffer     int           // messages a watcher may fall behind before it is dropped: 16
	Registerer prometheus.Registerer
}

// New returns a Hub reading seat maps from src.
func New(src Source, opts Options) *Hub {
	if opts.Every <= 0 {
		// Twice a snapshot's life: a change reaches watchers within 1.5 s
		// (the snapshot's age, then this), and still costs one read a second.
		opts.Every = event.SnapshotMaxAge / 2
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 16
	}
	return &Hub{src: src, every: opts.Every, buffered: opts.Buffer, feeds: map[string]*feed{},
		watchers: metrics.Register(opts.Registerer, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stagedoor_seat_stream_watchers",
			Help: "Browsers watching a live seat map on this instance.",
		}))}
}

// Subscription is one watcher's messages: first the whole map, then changes.
// C is closed when the watcher is dropped (too slow) or the hub closes.
type Subscription struct {
	C    <-chan Message
	c    chan Message
	feed *feed
	hub  *Hub
	once sync.Once
}

// Close stops the subscription. It is safe to call more than once.
func (s *Subscription) Close() { s.once.Do(func() { s.hub.leave(s) }) }

// Subscribe starts watching eventID: its first message is the whole seat map.
// It returns the source's error for an unknown event (errkind.NotFound), and
// ErrClosed once the hub is closed.
func (h *Hub) Subscribe(ctx context.Context, eventID string) (*Subscription, error) {
	m, err := h.src.SeatMap(ctx, eventID)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	f := h.feeds[m.EventID]
	if f == nil {
		f = h.startFeed(m)
	}
	c := make(chan Message, h.buffered)
	s := &Subscription{C: c, c: c, feed: f, hub: h}
	f.join(s) // the feed's latest map, then every change after it
	h.watchers.Inc()
	return s, nil
}

// Close drops every watcher and stops every feed: serve calls it when it
// starts shutting down, so that streams do not hold the shutdown up.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for id, f := range h.feeds {
		f.stop()
		delete(h.feeds, id)
	}
}

func (h *Hub) leave(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.feed.drop(s) // perhaps already dropped, as too slow
	if s.feed.empty() && h.feeds[s.feed.eventID] == s.feed {
		s.feed.stop() // nobody watches: no more reads
		delete(h.feeds, s.feed.eventID)
	}
}

// startFeed starts the feed of m's event, from m. h.mu is held.
func (h *Hub) startFeed(m *event.SeatMap) *feed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &feed{eventID: m.EventID, subs: map[*Subscription]struct{}{}, cancel: cancel, hub: h}
	f.last = m
	h.feeds[m.EventID] = f
	go f.run(ctx, h.every)
	return f
}

// changes is what changed from old to m, or nil when no seat did.
func changes(old, m *event.SeatMap) *Changes {
	before := make(map[string]event.SeatStatus, len(old.Seats))
	for _, s := range old.Seats {
		before[s.ID] = s.Status
	}
	var changed []SeatChange
	for _, s := range m.Seats {
		if before[s.ID] != s.Status {
			changed = append(changed, SeatChange{ID: s.ID, Status: s.Status})
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return &Changes{EventID: m.EventID, AsOf: m.AsOf, Seats: changed}
}
