package waitroom

import "time"

// The states a buyer is told when the sale has nothing for her.
const (
	// SoldOut: no seat is left and none is held by a hold that could still
	// give it back (every seat is sold). For good.
	SoldOut State = "sold_out"
	// Closed: the room admits nobody to choose seats now (ClosedReason says
	// why); a buyer keeps her place.
	Closed State = "closed"
)

// Why a room is closed.
const (
	// SeatsHeld: every seat left is in a hold (or a checkout) that may still
	// give it back; the room reopens when one does.
	SeatsHeld = "seats_held"
	// EventStarted: holds are refused from the event's start on. For good.
	EventStarted = "event_started"
)

// Sale is what a room needs to know of its event's seats to tell when the
// sale has nothing left for its buyers. The seat counts come from the
// event's seat snapshot (event.Service.Get), at most a second old: no call
// to Redis, and about one query a second per instance.
type Sale struct {
	StartsAt        time.Time
	Available, Held int // seats free to hold; seats held, in a checkout included
}

// Over is the buyer's status told with the sale's: a buyer waiting or
// admitted is told instead that the event has started (Closed,
// EventStarted) or that it is sold out (SoldOut), both for good, or that
// every seat left is held by others for now (Closed, SeatsHeld), keeping her
// place (Position, AdmittedUntil) for when a seat comes back. The room's admissions go on
// meanwhile, so a buyer whose turn came while it was closed is admitted when
// it reopens, if her admission has not lapsed.
func (st Status) Over(sale Sale) Status {
	switch {
	case !sale.StartsAt.IsZero() && !st.Now.Before(sale.StartsAt):
		st.State, st.ClosedReason = Closed, EventStarted
	case sale.Available > 0:
		return st
	case sale.Held == 0:
		st.State = SoldOut
	default:
		st.State, st.ClosedReason = Closed, SeatsHeld
		st.EstimatedWait = 0
		return st
	}
	// For good: no place to keep.
	st.Position, st.EstimatedWait, st.AdmittedUntil = 0, 0, time.Time{}
	return st
}
