package mail

import (
	"context"
	"time"
)

// AfterTaken makes s call f once the server has a message and before it is
// marked sent; an error from f ends the pass there, as a crash would.
func (s *Sender) AfterTaken(f func(id int64) error) { s.taken = f }

// Lease is how long a claim of s lasts.
func (s *Sender) Lease() time.Duration { return s.lease }

// Claim claims up to limit due messages of q at now for d, as a pass does.
func Claim(ctx context.Context, q Querier, now time.Time, d time.Duration, limit int) ([]Queued, error) {
	return claim(ctx, q, now, now.Add(d), limit, nil)
}

// SenderLock is the advisory lock one instance's Sender holds while it sends.
const SenderLock = senderLock
