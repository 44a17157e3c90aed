package waitroom

import (
	"context"
	"strconv"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// MaxRate is the most admissions a second a room may be set to, as at the
// event's creation.
const MaxRate = 100_000

// step is how many ticks one admission takes.
const step = int64(time.Second / time.Microsecond)

// schedule is how a room's ticks run, as roomScript keeps it: from t0 (µs)
// at tick k0, rate admissions a second, none while paused. Until an operator
// changes it, t0 is on_sale_at, k0 is 0 and rate the event's.
type schedule struct {
	onSale, t0, k0 int64
	rate           int64
	paused         bool
}

// changed says the schedule no longer starts at on_sale_at: an operator
// changed it after the sale opened.
func (sc schedule) changed() bool { return sc.t0 > sc.onSale }

// tickAt is the tick at µs (roomScript's tickat).
func (sc schedule) tickAt(us int64) int64 {
	if sc.paused || us < sc.t0 && sc.changed() {
		return sc.k0
	}
	return sc.k0 + (us-sc.t0)*sc.rate
}

// timeAt is when tick k comes, µs rounded down as roomScript records an
// admission, and false while the room is paused or for a tick before the
// schedule's start (it came under an earlier one, which is not kept).
func (sc schedule) timeAt(k int64) (int64, bool) {
	if sc.paused || sc.rate < 1 || k < sc.k0 && sc.changed() {
		return 0, false
	}
	return sc.t0 + floorDiv(k-sc.k0, sc.rate), true
}

// waitFor is how long from µs now until tick k, rounded up to the µs, and
// false while the room is paused (nobody knows).
func (sc schedule) waitFor(now, k int64) (time.Duration, bool) {
	if sc.paused || sc.rate < 1 {
		return 0, false
	}
	return time.Duration(max(sc.t0+ceilDiv(k-sc.k0, sc.rate)-now, 0)) * time.Microsecond, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// Control is an operator's change to a live room; a nil field is kept.
type Control struct {
	// Rate is the new number of admissions a second, 1 to MaxRate.
	Rate *int
	// Paused pauses the room's admissions (true) or resumes them (false).
	// Waiting buyers keep their places; admitted buyers keep their
	// admissions.
	Paused *bool
}

// Check returns an errkind.Invalid error saying what is wrong with the change.
func (c Control) Check() error {
	switch {
	case c.Rate == nil && c.Paused == nil:
		return errkind.Invalidf("send admit_per_second, paused or both")
	case c.Rate != nil && (*c.Rate < 1 || *c.Rate > MaxRate):
		return errkind.Invalidf("admit_per_second must be between 1 and %d", MaxRate)
	}
	return nil
}

// Change changes the event's live room: the admissions due under its old
// schedule are made, then the new one runs from Redis's now, on every
// instance at once (each instance's polls see it at their next progress
// read, within ProgressMaxAge). It returns the room's progress after the
// change. Errors wrap ErrNoRoom or ErrUnavailable, or are errkind.Invalid.
func (s *Service) Change(ctx context.Context, ev event.Info, c Control) (Progress, error) {
	if err := c.Check(); err != nil {
		return Progress{}, err
	}
	r, err := roomOf(ev)
	if err != nil {
		return Progress{}, err
	}
	rate, paused := "", ""
	if c.Rate != nil {
		rate = strconv.Itoa(*c.Rate)
	}
	if c.Paused != nil {
		paused = "0"
		if *c.Paused {
			paused = "1"
		}
	}
	rep, err := s.call(ctx, r, opControl, rate, paused)
	if err != nil {
		return Progress{}, err
	}
	s.forgetProgress(r.eventID)
	return rep.progress(r), nil
}

// forgetProgress drops this instance's progress of the event, so that its
// next poll reads the room anew.
func (s *Service) forgetProgress(eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.progress[eventID]; e != nil && e.done == nil {
		delete(s.progress, eventID)
	}
}
