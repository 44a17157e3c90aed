package onsale

import (
	"context"
	"net/http"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// The ends a buyer's visit can have.
const (
	outcomeBought   = "bought"
	outcomeSoldOut  = "sold out"
	outcomeGaveUp   = "gave up"
	outcomeCut      = "cut" // the run ended first
	outcomeRefused  = "refused"
	outcomeNoAnswer = "no answer"
)

// buyerState is what one buyer did, for the checks and the report.
type buyerState struct {
	arrive time.Time
	// joinSent and joinDone frame the first successful join of the queue;
	// zero without a room. joinTried is when the first join that the room may
	// have carried out was sent: one answered 200, or a 5xx or no answer (a
	// room whose answer was lost may have queued her, and keeps her place
	// when she joins again), not a 429 (refused before the room).
	joinSent, joinDone, joinTried time.Time
	// admittedAt is the moment the room admitted her (admitted_until less the
	// admission's length), on the server's clock; zero if never.
	admittedAt time.Time
	rejoined   bool // she had to join again (her place was lost)
	outcome    string
	seats      []string // the seats of her confirmed order
}

// buyer is one simulated buyer's visit.
type buyer struct {
	*client
	sale  Sale
	opts  Options
	state *buyerState
	hoard int // holds a greedy buyer places and gives back first; 0 for the others
}

// transportRetries is how many requests in a row a client retries when no
// answer comes, before giving up.
const transportRetries = 5

// visit is the buyer's whole visit: arrive, queue, hold, pay.
func (b *buyer) visit(ctx context.Context) {
	if !sleep(ctx, time.Until(b.state.arrive)) {
		b.state.outcome = outcomeCut
		return
	}
	b.state.outcome = b.run(ctx)
	if ctx.Err() != nil && b.state.outcome != outcomeBought {
		b.state.outcome = outcomeCut
	}
}

func (b *buyer) run(ctx context.Context) string {
	if b.sale.HasRoom {
		if out := b.queue(ctx); out != "" {
			return out
		}
	} else if wait := time.Until(b.sale.OnSaleAt); wait > 0 {
		// No room: she waits for the opening, reloading the page as it comes.
		if !sleep(ctx, wait+time.Duration(b.rng.Int64N(int64(500*time.Millisecond)))) {
			return outcomeCut
		}
	}
	b.hoardFirst(ctx)
	return b.shop(ctx)
}

// hoardFirst is a greedy buyer's start: b.hoard holds of one seat each, as
// fast as answers come, with no wait after a 429, each on the next seat of
// the map whatever its status (a hold of a taken seat is refused after
// hold-buyer decided, and counts as one the limit let through), and every
// one placed given back at once: hold-buyer must refuse what passes its
// allowance, which the check of the per-buyer limit counts.
func (b *buyer) hoardFirst(ctx context.Context) {
	if b.hoard == 0 {
		return
	}
	seats, ok := b.seatMap(ctx, b.sale.event())
	if !ok || len(seats) == 0 {
		return
	}
	for i := 0; i < b.hoard && ctx.Err() == nil; i++ {
		a, err := b.call(ctx, routeHold, b.hold(b.sale.event(), []apiclient.ID{seats[i%len(seats)].ID}))
		if err != nil || a.status != http.StatusCreated {
			continue
		}
		var h holdID
		if a.decode(&h) == nil {
			_, _ = b.call(ctx, routeRelease, func(ctx context.Context) (*http.Response, error) { return b.api.ReleaseHold(ctx, h.ID) })
		}
	}
}

// queueStatus is the answer of the queue's routes.
type queueStatus struct {
	Status        string    `json:"status"`
	Position      int       `json:"position"`
	EstimatedWait int64     `json:"estimated_wait_seconds"`
	AdmittedUntil time.Time `json:"admitted_until"`
	ClosedReason  string    `json:"closed_reason"`
}

// queue joins the waiting room and waits to be admitted, as the answers say.
// It returns "" once she is admitted, else how her visit ended.
func (b *buyer) queue(ctx context.Context) string {
	joined, counted, failures := false, false, 0
	defer func() {
		if counted {
			b.rec.queued.Add(-1)
		}
	}()
	for ctx.Err() == nil {
		route, send := routePoll, sender(func(ctx context.Context) (*http.Response, error) {
			return b.api.QueueStatus(ctx, b.sale.event(), nil)
		})
		if !joined {
			route, send = routeJoin, func(ctx context.Context) (*http.Response, error) { return b.api.JoinQueue(ctx, b.sale.event()) }
		}
		sent := time.Now()
		a, err := b.call(ctx, route, send)
		if !joined && b.state.joinTried.IsZero() && (err != nil || a.status == http.StatusOK || a.status >= 500) {
			b.state.joinTried = sent
		}
		if err != nil {
			if failures++; failures > transportRetries {
				return outcomeNoAnswer
			}
			sleep(ctx, b.jitter(time.Second))
			continue
		}
		failures = 0
		switch {
		case a.status == http.StatusOK:
			var st queueStatus
			if err := a.decode(&st); err != nil {
				return outcomeGaveUp
			}
			if !joined {
				joined = true
				if b.state.joinSent.IsZero() {
					b.state.joinSent, b.state.joinDone = sent, time.Now()
				}
				if !counted {
					counted = true
					b.rec.queued.Add(1)
				}
			}
			switch {
			case st.Status == "admitted":
				b.admitted(st)
				return ""
			case st.Status == "sold_out", st.Status == "closed" && st.ClosedReason == "event_started":
				return outcomeSoldOut // the room says there is nothing left
			case st.Status == "closed": // every seat left is held for now: look again later
				sleep(ctx, b.jitter(2*time.Second))
				continue
			}
			// The estimate is exact at the room's rate, in whole seconds
			// rounded up: look again then, at least every 250 ms, at most 15 s.
			wait := time.Duration(st.EstimatedWait) * time.Second
			sleep(ctx, b.jitter(min(max(wait, 250*time.Millisecond), 15*time.Second)))
		case a.status == http.StatusNotFound && joined:
			// Her place is gone (a lost Redis write): join again.
			joined, b.state.rejoined = false, true
		case a.status == http.StatusTooManyRequests, a.status >= 500:
			sleep(ctx, b.jitter(a.retryAfter(time.Second)))
		default:
			return outcomeRefused
		}
	}
	return outcomeCut
}

// admitted records her admission.
func (b *buyer) admitted(st queueStatus) {
	b.rec.admit.Add(1)
	at := st.AdmittedUntil.Add(-b.opts.AdmissionLength)
	if st.AdmittedUntil.IsZero() || at.After(time.Now().Add(time.Second)) {
		at = time.Now() // the admission's length is not the one assumed
	}
	b.state.admittedAt = at
}

// seat is a seat of the seat map (apiclient.Seat), as far as a buyer reads
// it: the rest of each seat is not decoded.
type seat struct {
	ID     apiclient.ID         `json:"id"`
	Status apiclient.SeatStatus `json:"status"`
}

// holdID is a hold (apiclient.Hold), as far as a buyer reads it.
type holdID struct {
	ID apiclient.ID `json:"id"`
}

// hold sends a hold of the event's seats.
func (c *client) hold(eventID apiclient.ID, seats []apiclient.ID) sender {
	return func(ctx context.Context) (*http.Response, error) {
		return c.api.CreateHold(ctx, apiclient.HoldRequest{EventId: eventID, SeatIds: seats})
	}
}

// readSeatMap reads the event's seat map.
func (c *client) readSeatMap(eventID apiclient.ID) sender {
	return func(ctx context.Context) (*http.Response, error) { return c.api.SeatMap(ctx, eventID) }
}

// seatMap reads the event's seat map, retrying what asks for it.
func (c *client) seatMap(ctx context.Context, eventID apiclient.ID) ([]seat, bool) {
	for failures := 0; ctx.Err() == nil; {
		a, err := c.call(ctx, routeSeats, c.readSeatMap(eventID))
		switch {
		case err != nil:
			if failures++; failures > transportRetries {
				return nil, false
			}
			sleep(ctx, time.Second)
		case a.status == http.StatusOK:
			var m struct {
				Seats []seat `json:"seats"`
			}
			if a.decode(&m) != nil {
				return nil, false
			}
			return m.Seats, true
		case a.status == http.StatusTooManyRequests, a.status >= 500:
			sleep(ctx, c.jitter(a.retryAfter(time.Second)))
		default:
			return nil, false
		}
	}
	return nil, false
}

// pick chooses up to n available seats, as people do: one at random and the
// available ones after it on the map. It returns none when none is available.
func (c *client) pick(seats []seat, n int, taken map[apiclient.ID]bool) []apiclient.ID {
	var free []int
	for i, s := range seats {
		if s.Status == apiclient.SeatStatusAvailable && !taken[s.ID] {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		return nil
	}
	first := c.rng.IntN(len(free))
	var out []apiclient.ID
	for k := range min(n, len(free)) {
		out = append(out, seats[free[(first+k)%len(free)]].ID)
	}
	return out
}
