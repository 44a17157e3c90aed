package onsale

import (
	"math"
	"time"
)

// OutageStats are what the clients saw of a Redis outage (a master killed,
// until its replica took over): the decisions that failed open, and the
// waiting room failing closed.
type OutageStats struct {
	// FailOpen are the holds and joins let through with no decision of the
	// limit that guards them (hold-buyer, queue-join), while it is enforced:
	// the answer passed the limits but carries no RateLimit-Policy, which the
	// server writes for the tightest limit that decided in Redis or by its
	// fallback. A hold whose hold-buyer failed open while hold-organizer (whose
	// tokens are leased) still decided names hold-organizer, and is not
	// counted: this is a lower bound.
	FailOpen Window `json:"fail_open"`
	// RoomUnavailable are the room's answers 503 service-overloaded, bound
	// waiting_room (joins, polls and holds of an event with a room): its Redis
	// could not be reached, and it failed closed. From a server that names no
	// bound, every service-overloaded no shedder sent counts (the in-flight
	// bound's too).
	RoomUnavailable Window `json:"room_unavailable"`
	// RoomUnavailableBy is RoomUnavailable by the instance that answered:
	// each instance's Redis client learns of the failover on its own.
	RoomUnavailableBy map[string]Window `json:"room_unavailable_by_instance,omitempty"`
	// Headers says whether the server sends RateLimit-Policy at all; without
	// it FailOpen cannot be told and stays empty.
	Headers bool `json:"ratelimit_headers"`
	// With faults: FailOpen and RoomUnavailable again, of the requests sent
	// from the first fault on (FaultS, seconds after on_sale_at), so that what
	// an overloaded machine does anyway before it is left out.
	FaultS                    *float64 `json:"first_fault_s,omitempty"`
	FailOpenAfterFault        Window   `json:"fail_open_after_fault"`
	RoomUnavailableAfterFault Window   `json:"room_unavailable_after_fault"`
}

// Window is when some kind of answer came: how many, the first and the last
// (seconds after on_sale_at, by when they were sent), and in how many
// distinct seconds.
type Window struct {
	Requests int     `json:"requests"`
	FirstS   float64 `json:"first_s"`
	LastS    float64 `json:"last_s"`
	Seconds  int     `json:"seconds"`
}

// SpanS is the time from the first to the last, 0 for none.
func (w Window) SpanS() float64 {
	if w.Requests == 0 {
		return 0
	}
	return math.Round((w.LastS-w.FirstS)*10) / 10
}

// window gathers moments into a Window.
type window struct {
	w       Window
	seconds map[int]bool
}

func (w *window) add(at float64) {
	if w.w.Requests == 0 || at < w.w.FirstS {
		w.w.FirstS = at
	}
	if w.w.Requests == 0 || at > w.w.LastS {
		w.w.LastS = at
	}
	w.w.Requests++
	if w.seconds == nil {
		w.seconds = map[int]bool{}
	}
	w.seconds[int(math.Floor(at))] = true
}

func (w *window) done() Window {
	w.w.Seconds = len(w.seconds)
	w.w.FirstS = math.Round(w.w.FirstS*10) / 10
	w.w.LastS = math.Round(w.w.LastS*10) / 10
	return w.w
}

// outageOf finds the fail-open decisions and the room's 503s among the
// requests; offset turns the recorder's times into times after on_sale_at.
func outageOf(requests []request, names []string, limits limitsInForce, hasRoom bool, offset time.Duration, faults []FaultResult) OutageStats {
	var out OutageStats
	faultAt := math.Inf(1)
	for _, f := range faults {
		faultAt = math.Min(faultAt, f.At)
	}
	if len(faults) > 0 {
		at := math.Round(faultAt*10) / 10
		out.FaultS = &at
	}
	for _, q := range requests {
		if route := names[q.route]; (route == routeHold || route == routeJoin) && names[q.policy] != "" {
			out.Headers = true
			break
		}
	}
	var failOpen, room, failOpenAfter, roomAfter window
	roomBy := map[string]*window{}
	for _, q := range requests {
		if q.client < 0 {
			continue
		}
		at := (q.start + offset).Seconds()
		route := names[q.route]
		switch {
		case out.Headers && names[q.policy] == "" && route == routeHold && pastTheLimits(q, names) &&
			limits.enforced(limitHoldBuyer),
			out.Headers && names[q.policy] == "" && route == routeJoin && q.status == 200 && limits.enforced(limitQueueJoin):
			failOpen.add(at)
			if at >= faultAt {
				failOpenAfter.add(at)
			}
		case hasRoom && q.status == 503 && q.kind == kindRefused && names[q.problem] == "service-overloaded" &&
			(names[q.refused] == "waiting_room" || names[q.refused] == "service-overloaded") && (route == routeJoin || route == routePoll || route == routeHold):
			room.add(at)
			if at >= faultAt {
				roomAfter.add(at)
			}
			in := names[q.instance]
			if roomBy[in] == nil {
				roomBy[in] = &window{}
			}
			roomBy[in].add(at)
		}
	}
	out.FailOpen, out.RoomUnavailable = failOpen.done(), room.done()
	out.FailOpenAfterFault, out.RoomUnavailableAfterFault = failOpenAfter.done(), roomAfter.done()
	if len(roomBy) > 0 {
		out.RoomUnavailableBy = map[string]Window{}
		for in, w := range roomBy {
			out.RoomUnavailableBy[in] = w.done()
		}
	}
	return out
}
