package event

import (
	"context"
	"errors"
	"sync"
	"time"
)

// snapshots keeps, per key, the last value fetched and when its fetch began, and
// serves it while it is younger than maxAge. When it is older, one caller
// fetches anew and every caller arriving meanwhile waits for that one fetch
// (single flight), so a stampede of reads of one key costs one fetch per maxAge.
// Errors are not kept: the next caller tries again.
type snapshots[K comparable, V any] struct {
	maxAge  time.Duration
	timeout time.Duration // of one fetch, which outlives the caller that started it
	fetch   func(ctx context.Context, key K) (V, error)
	now     func() time.Time // the clock snapshots age by (tests move it)

	mu      sync.Mutex
	flights map[K]*flight[V] // the latest fetch of each key, done or running
}

type flight[V any] struct {
	began time.Time
	done  chan struct{} // closed when value and err are set
	value V
	err   error
}

func newSnapshots[K comparable, V any](maxAge time.Duration, fetch func(context.Context, K) (V, error)) *snapshots[K, V] {
	return &snapshots[K, V]{maxAge: maxAge, timeout: 10 * time.Second, fetch: fetch, now: time.Now, flights: map[K]*flight[V]{}}
}

// get returns a value of key fetched at most maxAge ago, or the result of the
// fetch now running.
func (s *snapshots[K, V]) get(ctx context.Context, key K) (V, error) {
	s.mu.Lock()
	f := s.flights[key]
	if f != nil {
		select {
		case <-f.done:
			if f.err == nil && s.now().Sub(f.began) < s.maxAge {
				s.mu.Unlock()
				return f.value, nil
			}
			f = nil // stale or failed: fetch anew
		default: // running: wait for it below
		}
	}
	if f == nil {
		f = &flight[V]{began: s.now(), done: make(chan struct{})}
		s.evictStale()
		s.flights[key] = f
		s.mu.Unlock()
		s.run(ctx, key, f)
		return f.value, f.err
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// run fetches on behalf of every caller waiting: the caller that started it
// going away does not cancel it.
func (s *snapshots[K, V]) run(ctx context.Context, key K, f *flight[V]) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	f.err = errFetchPanicked // until fetch returns
	defer func() {
		close(f.done)
		if f.err != nil {
			s.mu.Lock()
			if s.flights[key] == f {
				delete(s.flights, key)
			}
			s.mu.Unlock()
		}
	}()
	f.value, f.err = s.fetch(ctx, key)
}

var errFetchPanicked = errors.New("event: the snapshot fetch panicked")

// evictStale forgets finished snapshots older than maxAge once many keys are
// kept, so that memory follows the events being read, not every event ever read.
// s.mu is held.
func (s *snapshots[K, V]) evictStale() {
	if len(s.flights) < 1024 {
		return
	}
	for k, f := range s.flights {
		select {
		case <-f.done:
			if s.now().Sub(f.began) >= s.maxAge {
				delete(s.flights, k)
			}
		default:
		}
	}
}
