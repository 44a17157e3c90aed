package testenv

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, for the options that take a
// func() time.Time (pass its Now). Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads at until it is moved.
func NewClock(at time.Time) *Clock { return &Clock{now: at} }

// Now is the time the clock reads.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
