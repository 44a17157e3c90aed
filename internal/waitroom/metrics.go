package waitroom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RoomProgress is an event's room as this instance last read it for its
// polls (at most ProgressMaxAge old while buyers poll here).
type RoomProgress struct {
	EventID  string
	Progress Progress
	ReadAt   time.Time
}

// Waiting is how many buyers wait, not yet admitted.
func (p RoomProgress) Waiting() int { return p.Progress.Waiting() }

// WaitSeconds is how long the last buyer in the queue waits yet, at the
// room's rate.
func (p RoomProgress) WaitSeconds() float64 {
	if p.Progress.Rate < 1 {
		return 0
	}
	return float64(p.Waiting()) / float64(p.Progress.Rate)
}

// Rooms returns the progress of every room this instance read in the last
// minute for its polls, without calling Redis: the rooms its buyers poll.
func (s *Service) Rooms() []RoomProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	var out []RoomProgress
	for id, e := range s.progress {
		if e.done != nil || e.err != nil || now.Sub(e.readAt) > time.Minute {
			continue
		}
		out = append(out, RoomProgress{EventID: id, Progress: e.p, ReadAt: e.readAt})
	}
	return out
}

// roomCollector exports Rooms: the queue's length, its admissions so far and
// the last buyer's wait, by event. A scrape costs no Redis call; every
// instance whose buyers poll a room exports the same figures (the room is
// one), so a dashboard takes their max by event.
type roomCollector struct {
	s                       *Service
	waiting, admitted, wait *prometheus.Desc
}

// Collector returns the rooms' gauges, for a registry.
func (s *Service) Collector() prometheus.Collector {
	return &roomCollector{s: s,
		waiting: prometheus.NewDesc("stagedoor_waitroom_waiting",
			"Buyers waiting in the event's room, not yet admitted, as this instance last read it for its polls.", []string{"event_id"}, nil),
		admitted: prometheus.NewDesc("stagedoor_waitroom_admitted_total",
			"Buyers the event's room has admitted since it opened (rate() is admissions a second).", []string{"event_id"}, nil),
		wait: prometheus.NewDesc("stagedoor_waitroom_wait_seconds",
			"How long the last buyer in the event's queue waits yet, at the room's rate.", []string{"event_id"}, nil),
	}
}

func (c *roomCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.admitted
	ch <- c.wait
}

func (c *roomCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.s.Rooms() {
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(r.Waiting()), r.EventID)
		ch <- prometheus.MustNewConstMetric(c.admitted, prometheus.CounterValue, float64(r.Progress.AdmittedThrough), r.EventID)
		ch <- prometheus.MustNewConstMetric(c.wait, prometheus.GaugeValue, r.WaitSeconds(), r.EventID)
	}
}
