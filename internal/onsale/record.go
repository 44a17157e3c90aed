package onsale

import (
	"sync"
	"sync/atomic"
	"time"
)

// The routes the simulator calls, as the API's templates name them.
const (
	routeSignup      = "POST /v1/organizers"
	routeLogin       = "POST /v1/login"
	routeCreateEvent = "POST /v1/events"
	routeLimits      = "GET /v1/admin/limits"
	routeJoin        = "POST /v1/events/{id}/queue"
	routePoll        = "GET /v1/events/{id}/queue"
	routeSeats       = "GET /v1/events/{id}/seats"
	routeHold        = "POST /v1/holds"
	routeRelease     = "DELETE /v1/holds/{id}"
	routeOrder       = "POST /v1/orders"
	routeGetOrder    = "GET /v1/orders/{id}"
)

// Who made a request.
const (
	setupClient = -1 // the organizer and the run itself
)

// request is one request as the recorder keeps it: small, since a run makes
// millions. Strings are kept once, by index (names).
type request struct {
	start    time.Duration // since the recorder's epoch
	latency  time.Duration
	client   int32  // buyers 0…n-1, bots after them; setupClient
	status   int16  // 0: no answer (a transport error)
	kind     uint8  // kindOK, kindRefused, kindError, kindNoAnswer
	route    uint16 // index in names
	instance uint16 // X-Served-By, or "-"
	problem  uint16 // the problem's slug, or ""
	refused  uint16 // what refused it (refusedBy), or "" when it is no refusal
	policy   uint16 // the limit its RateLimit-Policy names, or ""
}

// names keeps each distinct string once.
type names struct {
	index map[string]uint16
	list  []string
}

// tooManyNames stands for every string past the 65,535th.
const tooManyNames = "(too many names)"

func (n *names) id(s string) uint16 {
	if i, ok := n.index[s]; ok {
		return i
	}
	if n.index == nil {
		n.index = map[string]uint16{}
	}
	if len(n.list) >= 1<<16-1 {
		s = tooManyNames
		if i, ok := n.index[s]; ok {
			return i
		}
	}
	i := uint16(len(n.list))
	n.index[s] = i
	n.list = append(n.list, s)
	return i
}

// recorder records every request, the moments the report charts, and the
// counters of the live progress. It is safe for every client at once.
type recorder struct {
	epoch time.Time // the run's start; every time is kept since then

	mu       sync.Mutex
	names    names
	requests []request
	refused  map[string]int64 // by what refused (refusedBy)
	sold     []soldAt         // each confirmed order, in the order the clients saw them

	total    atomic.Int64 // requests answered or failed
	fivexx   atomic.Int64 // 5xx the contract does not document
	noAnswer atomic.Int64 // no answer
	queued   atomic.Int64 // buyers waiting in the room now
	admit    atomic.Int64 // buyers admitted so far
	holding  atomic.Int64 // buyers holding seats now, not yet paid
	seats    atomic.Int64 // seats sold so far
	done     atomic.Int64 // buyers finished
}

// soldAt is a confirmed order, as its buyer learnt of it.
type soldAt struct {
	at    time.Duration
	seats int
}

func newRecorder(epoch time.Time) *recorder {
	r := &recorder{epoch: epoch, refused: map[string]int64{}}
	r.names.id("") // index 0 is the empty name
	return r
}

// add records one request's answer (status 0: none came): its problem's type
// (slug), the limit and shedder the problem names, and the limit its
// RateLimit-Policy header names.
func (r *recorder) add(client int32, route string, start time.Time, latency time.Duration, status int,
	instance, slug, limit, shedder, policy string) {
	kind := kindOf(status, slug)
	by := ""
	r.total.Add(1)
	switch kind {
	case kindNoAnswer:
		r.noAnswer.Add(1)
	case kindError:
		r.fivexx.Add(1)
	case kindRefused:
		by = refusedBy(status, slug, limit, shedder, instance)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, request{
		start: start.Sub(r.epoch), latency: latency, client: client, status: int16(status), kind: uint8(kind),
		route: r.names.id(route), instance: r.names.id(instance), problem: r.names.id(slug),
		refused: r.names.id(by), policy: r.names.id(policy),
	})
	if by != "" {
		r.refused[by]++
	}
}

// confirmed records an order confirmed with n seats, seen now.
func (r *recorder) confirmed(n int) {
	r.seats.Add(int64(n))
	r.mu.Lock()
	r.sold = append(r.sold, soldAt{at: time.Since(r.epoch), seats: n})
	r.mu.Unlock()
}

// refusals is a copy of the refusals by limit so far.
func (r *recorder) refusals() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.refused))
	for k, v := range r.refused {
		out[k] = v
	}
	return out
}

// snapshot is every request recorded so far, with the names they index, and
// the confirmed orders.
func (r *recorder) snapshot() ([]request, []string, []soldAt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.requests...), append([]string(nil), r.names.list...), append([]soldAt(nil), r.sold...)
}
