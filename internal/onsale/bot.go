package onsale

import (
	"context"
	"net/http"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// bot is a script with an account of its own: from its start until the sale
// ends it reads the seat map and holds 1 to 4 of the seats it shows, again and
// again, as fast as answers come (Options.BotPause apart), honouring no
// Retry-After and never joining the queue. It never pays: what it takes, it
// takes from the buyers.
type bot struct {
	*client
	sale  Sale
	pause time.Duration
}

// botMapEvery is how often a bot reads the seat map again; in between it
// holds from the map it has.
const botMapEvery = 500 * time.Millisecond

func (b *bot) run(ctx context.Context, start time.Time) {
	if !sleep(ctx, time.Until(start)) {
		return
	}
	var seats []seat
	var read time.Time
	taken := map[apiclient.ID]bool{}
	for ctx.Err() == nil {
		if seats == nil || time.Since(read) > botMapEvery {
			if m, ok := b.seatMapOnce(ctx); ok {
				seats, read, taken = m, time.Now(), map[apiclient.ID]bool{}
			}
			sleep(ctx, b.pause)
		}
		chosen := b.pick(seats, 1+b.rng.IntN(4), taken)
		if len(chosen) == 0 {
			chosen = b.anySeats(seats)
		}
		if len(chosen) > 0 {
			a, err := b.call(ctx, routeHold, b.hold(b.sale.event(), chosen))
			if err == nil {
				for _, id := range a.problem.UnavailableSeatIDs {
					taken[id] = true
				}
				if a.status == http.StatusCreated {
					for _, id := range chosen {
						taken[id] = true
					}
				}
			}
		}
		sleep(ctx, b.pause)
	}
}

// seatMapOnce reads the seat map once, whatever the answer.
func (b *bot) seatMapOnce(ctx context.Context) ([]seat, bool) {
	a, err := b.call(ctx, routeSeats, b.readSeatMap(b.sale.event()))
	if err != nil || a.status != http.StatusOK {
		return nil, false
	}
	var m struct {
		Seats []seat `json:"seats"`
	}
	if a.decode(&m) != nil {
		return nil, false
	}
	return m.Seats, true
}

// anySeats is one seat at random: a bot with nothing available tries anyway.
func (b *bot) anySeats(seats []seat) []apiclient.ID {
	if len(seats) == 0 {
		return nil
	}
	return []apiclient.ID{seats[b.rng.IntN(len(seats))].ID}
}
