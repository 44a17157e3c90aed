package httpapi

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/seatstream"
)

// The seat map's wire format, the one place it is written: the body of GET
// /v1/events/{id}/seats and the data of the stream's "snapshot" (the same
// bytes), and the data of its "changes". Times are UTC.

// seatsJSON is seats of an event as of a moment: the SeatMap schema with
// whole seats (seatJSON), the stream's "changes" with their statuses alone
// (seatChangeJSON).
type seatsJSON[S any] struct {
	EventID string    `json:"event_id"`
	AsOf    time.Time `json:"as_of"`
	Seats   []S       `json:"seats"`
}

type seatJSON struct {
	ID         string           `json:"id"`
	Section    string           `json:"section"`
	Row        string           `json:"row"`
	Number     int              `json:"number"`
	PriceCents int64            `json:"price_cents"`
	Status     event.SeatStatus `json:"status"`
}

type seatChangeJSON struct {
	ID     string           `json:"id"`
	Status event.SeatStatus `json:"status"`
}

func seatMapJSONOf(m *event.SeatMap) any {
	seats := make([]seatJSON, len(m.Seats))
	for i, seat := range m.Seats {
		seats[i] = seatJSON(seat)
	}
	return seatsJSON[seatJSON]{EventID: m.EventID, AsOf: m.AsOf.UTC(), Seats: seats}
}

func seatChangesJSONOf(c *seatstream.Changes) any {
	seats := make([]seatChangeJSON, len(c.Seats))
	for i, seat := range c.Seats {
		seats[i] = seatChangeJSON(seat)
	}
	return seatsJSON[seatChangeJSON]{EventID: c.EventID, AsOf: c.AsOf.UTC(), Seats: seats}
}

// seatMapBodies keeps the encoded body of the latest seat-map snapshot of each
// event, and of its latest changes: a 5,000-seat map is encoded once a second,
// not once per read or per watcher, and compressed at most once too; a change
// is encoded once for all its watchers.
type seatMapBodies struct {
	snapshots latestBodies[event.SeatMap]
	changes   latestBodies[seatstream.Changes]
}

// body is the encoded snapshot m.
func (b *seatMapBodies) body(m *event.SeatMap) (*encodedBody[event.SeatMap], error) {
	return b.snapshots.body(m.EventID, m.AsOf, m, seatMapJSONOf)
}

// streamEvent is msg as a server-sent event: its name and its data.
func (b *seatMapBodies) streamEvent(msg seatstream.Message) (name string, data []byte, err error) {
	if msg.Snapshot != nil {
		enc, err := b.body(msg.Snapshot)
		if err != nil {
			return "", nil, err
		}
		return "snapshot", enc.body, nil
	}
	enc, err := b.changes.body(msg.Changes.EventID, msg.Changes.AsOf, msg.Changes, seatChangesJSONOf)
	if err != nil {
		return "", nil, err
	}
	return "changes", enc.body, nil
}

// latestBodies keeps, per event, the encoded body of the latest value of T
// it was asked for, known by its address (values shared by every reader).
type latestBodies[T any] struct {
	mu     sync.Mutex
	bodies map[string]*encodedBody[T] // event id → body
}

type encodedBody[T any] struct {
	of   *T
	asOf time.Time
	body []byte
	gz   gzipOnce // body compressed, on the first read that takes gzip
}

// body is v (eventID's, as of asOf) encoded as wire(v) makes it.
func (b *latestBodies[T]) body(eventID string, asOf time.Time, v *T, wire func(*T) any) (*encodedBody[T], error) {
	b.mu.Lock()
	cached, ok := b.bodies[eventID]
	b.mu.Unlock()
	if ok && cached.of == v {
		return cached, nil
	}
	body, err := json.Marshal(wire(v))
	if err != nil {
		return nil, fmt.Errorf("encode seat map: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bodies == nil || len(b.bodies) >= 1024 {
		b.bodies = make(map[string]*encodedBody[T]) // forget them all; they refresh each second anyway
	}
	enc := &encodedBody[T]{of: v, asOf: asOf, body: body}
	if cur, ok := b.bodies[eventID]; !ok || !cur.asOf.After(asOf) {
		b.bodies[eventID] = enc
	}
	return enc, nil
}
