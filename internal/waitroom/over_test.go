package waitroom

import (
	"testing"
	"time"
)

// TestOver: a waiting or admitted buyer is told the sale's state: closed for
// now with her place kept while every seat left is held, sold out or closed
// for good (no place) when nothing is left or the event has started, and her
// own status while a seat is free.
func TestOver(t *testing.T) {
	now := time.Date(2030, 1, 1, 20, 0, 0, 0, time.UTC)
	waiting := Status{State: Waiting, Position: 7, EstimatedWait: time.Minute, Now: now}
	admitted := Status{State: Admitted, AdmittedUntil: now.Add(time.Minute), Now: now}
	later := now.Add(time.Hour)
	for _, c := range []struct {
		name string
		st   Status
		sale Sale
		want Status
	}{
		{"a seat free", waiting, Sale{StartsAt: later, Available: 1, Held: 5}, waiting},
		{"all held, waiting", waiting, Sale{StartsAt: later, Held: 5},
			Status{State: Closed, ClosedReason: SeatsHeld, Position: 7, Now: now}},
		{"all held, admitted", admitted, Sale{StartsAt: later, Held: 5},
			Status{State: Closed, ClosedReason: SeatsHeld, AdmittedUntil: admitted.AdmittedUntil, Now: now}},
		{"all sold", waiting, Sale{StartsAt: later}, Status{State: SoldOut, Now: now}},
		{"all sold, admitted", admitted, Sale{StartsAt: later}, Status{State: SoldOut, Now: now}},
		{"started", waiting, Sale{StartsAt: now, Available: 3}, Status{State: Closed, ClosedReason: EventStarted, Now: now}},
	} {
		if got := c.st.Over(c.sale); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
