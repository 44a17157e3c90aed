package httpapi

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/waitroom"
)

// saleCollector exports, for each event whose waiting room this instance's
// buyers poll (waitroom.Service.Rooms), the room's gauges and the event's
// seats sold, held and left, from the event's snapshot (at most a second old:
// a scrape adds at most a query a second per event, and no Redis call).
type saleCollector struct {
	rooms func() []waitroom.RoomProgress
	event func(ctx context.Context, id string) (event.Event, error)
	room  prometheus.Collector
	seats *prometheus.Desc
}

func newSaleCollector(rooms *waitroom.Service, events *event.Service) *saleCollector {
	return &saleCollector{rooms: rooms.Rooms, event: events.Get, room: rooms.Collector(),
		seats: prometheus.NewDesc("stagedoor_event_seats",
			"Seats of an event with a waiting room, by state (sold, held, available), from this instance's snapshot.",
			[]string{"event_id", "state"}, nil)}
}

func (c *saleCollector) Describe(ch chan<- *prometheus.Desc) {
	c.room.Describe(ch)
	ch <- c.seats
}

func (c *saleCollector) Collect(ch chan<- prometheus.Metric) {
	c.room.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, r := range c.rooms() {
		e, err := c.event(ctx, r.EventID)
		if err != nil {
			continue
		}
		for state, n := range map[string]int{"sold": e.SeatsSold, "held": e.SeatsHeld, "available": e.SeatsAvailable} {
			ch <- prometheus.MustNewConstMetric(c.seats, prometheus.GaugeValue, float64(n), r.EventID, state)
		}
	}
}
