package waitroom

import (
	"context"
	"math"
	"time"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// ProgressMaxAge is the oldest a room's progress is used to answer a poll:
// each instance reads an event's progress from Redis at most once in it,
// however many poll.
const ProgressMaxAge = 100 * time.Millisecond

// maxBatch is the most buyers one status call asks about.
const maxBatch = 1000

// LookupHorizon is how far from her turn, in admissions of the room's rate,
// a buyer who joined before the draw is asked about (her rank, once): until
// then her place is estimated from her lottery score, to a few hundred
// places in a million, so that the lottery's buyers are asked about at the
// rate they are admitted, not all at once when the sale opens.
const LookupHorizon = 30 * time.Second

// Place is what a queue token says of one buyer's place, all that Poll needs
// to answer her polls from the room's progress instead of a call of her own.
// The room hands it out (Status.Place); internal/queuetoken signs it, so that
// it comes back unaltered.
type Place struct {
	EventID, BuyerID string
	// Drawn: the lottery was drawn when the room was last asked about her,
	// so Rank and Tick are hers for good.
	Drawn bool
	// Rank is the number of buyers ahead of her in the queue, counting
	// every buyer the room ever admitted (before the draw: among those
	// queued so far).
	Rank int64
	// Tick is when she is admitted, in ticks of the room's schedule (a
	// millionth of an admission; Drawn only): once the lottery is drawn
	// nobody can be queued ahead of her, so it never changes, whatever
	// the schedule does.
	Tick int64
	// Until is when her admission ends, µs, once she is admitted; else 0.
	Until int64
	// Lottery is her lottery score × 2⁵³ and Queued the number of buyers
	// queued when she was last asked about (before the draw only): each
	// early joiner since is drawn ahead of her with the chance of her score.
	Lottery, Queued int64
}

// Poll returns the buyer's place, as Status does. With the Place of her last
// answer (from her token), it answers from the room's progress, read from
// Redis at most once per ProgressMaxAge by this instance for every caller:
// no call of her own. Without one, or with one made before the lottery was
// drawn once it is and her turn is within LookupHorizon (until then her
// place is estimated), it asks Redis about her, in one call with every other
// buyer this instance is asking about meanwhile. A Place of another event or
// buyer is ignored. Errors wrap ErrNoRoom or ErrUnavailable, or are of kind
// errkind.NotFound (never joined, or her admission lapsed).
func (s *Service) Poll(ctx context.Context, ev event.Info, buyerID string, pl *Place) (Status, error) {
	st, err := s.poll(ctx, ev, buyerID, pl)
	if err == nil && st.State == Admitted {
		// Her next hold here asks the room, not a refusal it remembers.
		s.admitted.forget(ev.ID, buyerID, true)
	}
	return st, err
}

func (s *Service) poll(ctx context.Context, ev event.Info, buyerID string, pl *Place) (Status, error) {
	r, err := roomOf(ev)
	if err != nil {
		return Status{}, err
	}
	if pl == nil || pl.EventID != ev.ID || pl.BuyerID != buyerID {
		return s.lookup(ctx, r, buyerID)
	}
	p, err := s.progressOf(ctx, r)
	if err != nil {
		return Status{}, err
	}
	if !pl.Drawn && p.Drawn {
		if st, far := pl.drawn(p); far {
			return st, nil
		}
		return s.lookup(ctx, r, buyerID)
	}
	st, v := pl.at(p.schedule, p.Now, s.admission, int64(p.Queued))
	switch v {
	case ask:
		return s.lookup(ctx, r, buyerID)
	case lapsed:
		return Status{}, errkind.NotFoundf("not in the queue: %s", lapsedWhy(r.eventID, st.AdmittedUntil))
	}
	return st, nil
}

// verdict is what a place says of its buyer at a moment.
type verdict int

const (
	current verdict = iota // waiting, or admitted until AdmittedUntil
	lapsed                 // her admission ended at AdmittedUntil
	ask                    // the place cannot say: ask the room
)

// at is the Status of the buyer of the place at Redis's time now on the
// room's schedule. It is the arithmetic of roomScript, in integers. A
// buyer whose turn came before the schedule last changed is asked about:
// when her admission began is not in the schedule any more.
func (pl Place) at(sc schedule, now time.Time, admission time.Duration, queued int64) (Status, verdict) {
	nowUs := now.UnixMicro()
	st := Status{State: Waiting, Now: now, Place: pl}
	if pl.Until > 0 { // admitted when she last asked
		st.State, st.AdmittedUntil = Admitted, micros(pl.Until)
		return st, currentUntil(pl.Until, nowUs)
	}
	wait := func(tick int64) {
		var known bool
		st.EstimatedWait, known = sc.waitFor(nowUs, tick)
		st.Paused = !known
	}
	if !pl.Drawn {
		later := max(queued-pl.Queued, 0)
		ahead := pl.Rank + int64(math.Round(float64(later)*float64(pl.Lottery)/(1<<53)))
		st.Position = int(ahead + 1)
		wait((ahead + 1) * step)
		return st, current
	}
	if nowt := sc.tickAt(nowUs); pl.Tick > nowt {
		st.Position = int(ceilDiv(pl.Tick-nowt, step))
		wait(pl.Tick)
		return st, current
	}
	began, ok := sc.timeAt(pl.Tick)
	if !ok {
		return Status{}, ask
	}
	until := began + admission.Microseconds()
	st.State, st.AdmittedUntil = Admitted, micros(until)
	st.Place.Until = until
	return st, currentUntil(until, nowUs)
}

// currentUntil is the verdict on an admission that ends at until (µs) at now.
func currentUntil(until, now int64) verdict {
	if until > now {
		return current
	}
	return lapsed
}

// drawn is the estimated Status, once the lottery is drawn, of a buyer whose
// place is from before it, and true when she is far enough from her turn to
// be told an estimate (more than LookupHorizon of admissions, and six
// standard deviations of the estimate, ahead of her): each of the early
// joiners who came after her last answer was drawn ahead of her with the
// chance of her score.
func (pl Place) drawn(p Progress) (Status, bool) {
	f := float64(pl.Lottery) / (1 << 53)
	later := float64(max(int64(p.EarlyJoiners)-pl.Queued, 0))
	rank := pl.Rank + int64(math.Round(later*f))
	sc, nowUs := p.schedule, p.Now.UnixMicro()
	tick := (rank + 1) * step
	nowt := sc.tickAt(nowUs)
	horizon := float64(sc.rate)*LookupHorizon.Seconds() + 6*math.Sqrt(later*f*(1-f)) + 1
	if tick <= nowt || float64(ceilDiv(tick-nowt, step)) <= horizon {
		return Status{}, false
	}
	st := Status{State: Waiting, Position: int(ceilDiv(tick-nowt, step)), Now: p.Now, Place: pl}
	var known bool
	st.EstimatedWait, known = sc.waitFor(nowUs, tick)
	st.Paused = !known
	return st, true
}

// lookup asks Redis where the buyer stands, in one call with every buyer
// this instance asks about meanwhile: the first caller's call goes at once,
// and those who come while it runs go together in the next.
func (s *Service) lookup(ctx context.Context, r room, buyerID string) (Status, error) {
	answer := make(chan lookupAnswer, 1)
	s.mu.Lock()
	b := s.batches[r.eventID]
	if b == nil {
		b = &batch{room: r, waiting: map[string][]chan lookupAnswer{}}
		s.batches[r.eventID] = b
		go s.runBatches(b)
	}
	b.waiting[buyerID] = append(b.waiting[buyerID], answer)
	s.mu.Unlock()
	select {
	case a := <-answer:
		if a.err == nil && a.why != "" {
			a.err = errkind.NotFoundf("not in the queue: %s", a.why)
		}
		return a.st, a.err
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
}

// batch is the buyers of one room waiting for a status call.
type batch struct {
	room    room
	waiting map[string][]chan lookupAnswer
}

type lookupAnswer struct {
	st  Status
	why string
	err error
}

// runBatches makes the status calls of a room while buyers wait for one,
// then leaves.
func (s *Service) runBatches(b *batch) {
	for {
		s.mu.Lock()
		if len(b.waiting) == 0 {
			delete(s.batches, b.room.eventID)
			s.mu.Unlock()
			return
		}
		buyers := make([]string, 0, min(len(b.waiting), maxBatch))
		answers := make([][]chan lookupAnswer, 0, cap(buyers))
		for buyer, chans := range b.waiting {
			if len(buyers) == maxBatch {
				break
			}
			buyers, answers = append(buyers, buyer), append(answers, chans)
			delete(b.waiting, buyer)
		}
		s.mu.Unlock()
		// The call outlives any one caller: others wait for it too.
		rep, err := s.call(context.Background(), b.room, "status", buyers...)
		for i, chans := range answers {
			var a lookupAnswer
			if a.err = err; err == nil {
				a.st, a.why = rep.explain(b.room, buyers[i], i)
			}
			for _, c := range chans {
				c <- a
			}
		}
	}
}

// progressOf is the room's progress read at most ProgressMaxAge ago (by this
// instance's clock), read once for all its callers when older (an error
// too is kept that long: the room stays closed), with Now moved on by the
// time since it was read. Now is then never later than Redis's clock.
func (s *Service) progressOf(ctx context.Context, r room) (Progress, error) {
	s.mu.Lock()
	e := s.progress[r.eventID]
	if e == nil || (e.done == nil && s.clock().Sub(e.readAt) >= ProgressMaxAge) {
		e = &progressEntry{done: make(chan struct{})}
		s.progress[r.eventID] = e
		s.evictProgress()
		go s.readProgress(r, e)
	}
	done := e.done
	s.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return Progress{}, ctx.Err()
		}
	}
	s.mu.Lock()
	p, err, readAt := e.p, e.err, e.readAt
	s.mu.Unlock()
	if err != nil {
		return Progress{}, err
	}
	p.Now = p.Now.Add(max(s.clock().Sub(readAt), 0))
	p.Drawn = !p.Now.Before(r.onSaleAt)
	return p, nil
}

// progressEntry is a room's progress as last read; done is open while it is
// being read.
type progressEntry struct {
	p      Progress
	err    error
	readAt time.Time
	done   chan struct{}
}

func (s *Service) readProgress(r room, e *progressEntry) {
	rep, err := s.call(context.Background(), r, "progress")
	s.mu.Lock()
	defer s.mu.Unlock()
	e.err, e.readAt = err, s.clock() // after the answer: Redis's clock was read before it
	if err == nil {
		e.p = rep.progress(r)
	}
	close(e.done)
	e.done = nil
}

// evictProgress forgets the progress of rooms nobody polled for a minute.
// The caller holds s.mu.
func (s *Service) evictProgress() {
	now := s.clock()
	for id, e := range s.progress {
		if e.done == nil && now.Sub(e.readAt) > time.Minute {
			delete(s.progress, id)
		}
	}
}
