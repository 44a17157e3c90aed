package checkout

import (
	"context"
	"sync"
	"time"
)

// refundLock is the advisory lock that lets one instance at a time run the
// refund pass.
const refundLock = 0x5eed_0028

// refundBatch bounds the pending refunds one pass sends again.
const refundBatch = 200

// refundWorkers is how many refunds a pass sends to Payrail at once.
const refundWorkers = 8

// DefaultRefundEvery is how often RunRefunds runs a pass.
const DefaultRefundEvery = time.Second

// RefundPass is what one pass of Refunds did.
type RefundPass struct {
	// Sent counts the refunds it sent to Payrail (again, or for the first
	// time: a cancellation's).
	Sent int
	// Succeeded, Failed and Pending count how they stand after it.
	Succeeded, Failed, Pending int
	// Begun counts the cancellations' refunds it began.
	Begun int
	// HoldsReleased counts the holds of cancelled events it released.
	HoldsReleased int64
	// CancellationsDone counts the cancellations it found done;
	// CancellationsUnfinished those it did not.
	CancellationsDone, CancellationsUnfinished int
}

// Refunds runs one pass of the refund job, on one instance at a time (the
// others return at once with a zero RefundPass): it works the cancellations
// (cancel.go), then sends every pending refund whose next attempt is due and
// on which no request works to Payrail again, with the same key, and
// settles it by the answer. A refund Payrail cannot answer is put off (1 s,
// doubling, at most a minute) and tried again by a later pass.
func (s *Service) Refunds(ctx context.Context) (RefundPass, error) {
	return alone(ctx, s, refundLock, "checkout: refund pass", s.refundPass)
}

// refundPass is one pass of Refunds, with its lock held.
func (s *Service) refundPass(ctx context.Context) (RefundPass, error) {
	var p RefundPass
	var mu sync.Mutex
	drive := func(refs []OrderRefund, charges []string) {
		done := s.driveAll(ctx, refs, charges)
		mu.Lock()
		defer mu.Unlock()
		for _, ref := range done {
			p.count(ref)
		}
	}
	w, err := s.workCancellations(ctx, drive)
	p.Begun, p.HoldsReleased, p.CancellationsDone, p.CancellationsUnfinished = w.begun, w.holdsReleased, w.done, w.unfinished
	if err != nil {
		return p, err
	}
	refs, charges, err := s.store.dueRefunds(ctx, refundBatch, s.lease)
	if err != nil {
		return p, err
	}
	drive(refs, charges)
	pending, err := s.store.pendingRefunds(ctx)
	if err != nil {
		return p, err
	}
	s.metrics.pendingRefunds.Set(float64(pending))
	s.metrics.unfinishedCancellations.Set(float64(p.CancellationsUnfinished))
	return p, nil
}

// count adds a refund a pass drove to its counts.
func (p *RefundPass) count(ref OrderRefund) {
	if ref.AmountCents > 0 {
		p.Sent++
	}
	switch ref.Status {
	case RefundSucceeded:
		p.Succeeded++
	case RefundFailed:
		p.Failed++
	default:
		p.Pending++
	}
}

// driveAll drives the refunds, refundWorkers at a time, and returns them as
// they stand after.
func (s *Service) driveAll(ctx context.Context, refs []OrderRefund, charges []string) []OrderRefund {
	out := make([]OrderRefund, len(refs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(refundWorkers, len(refs)) {
		wg.Go(func() {
			for i := range work {
				out[i] = s.driveRefund(ctx, refs[i], charges[i])
			}
		})
	}
	for i := range refs {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// WakeRefunds asks this instance's refund loop (RunRefunds) for a pass now,
// rather than at its next tick: an event was just cancelled.
func (s *Service) WakeRefunds() {
	select {
	case s.wake <- struct{}{}:
	default: // a pass is asked for already
	}
}

// RunRefunds runs Refunds every interval (DefaultRefundEvery when 0), and
// whenever WakeRefunds asks, until ctx ends. Its failures are logged as the
// database's outage, not one ERROR each.
func (s *Service) RunRefunds(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultRefundEvery
	}
	s.runPasses(ctx, "refund pass", every, s.wake, func(ctx context.Context) error {
		_, err := s.Refunds(ctx)
		return err
	})
}
