package ratelimit

import (
	"hash/maphash"
	"sync"
)

// localBuckets are in-process buckets with the arithmetic of the Redis ones
// (decide, in gcra.go), on the limiter's clock: the fallback of a limit whose
// Policy is Fallback while Redis is unreachable. They count what this instance
// saw, so n instances admit up to n times the limit between them.
//
// At most max buckets are held. A bucket whose TAT is past is full, the same as a
// missing one, and is the first to go when room is needed; only when more than max
// identities are all mid-bucket at once is an arbitrary one dropped (it reads as
// full again). Safe for concurrent use.
type localBuckets struct {
	mu   sync.Mutex
	tats map[string]int64
	max  int
}

func newLocalBuckets(size int) *localBuckets {
	return &localBuckets{tats: make(map[string]int64), max: size}
}

// take decides one request against bs at now (µs), all or nothing; when veto is
// set another part of the request already refused, and nothing is written.
func (s *localBuckets) take(bs []bucket, now int64, veto bool) []verdict {
	vs := make([]verdict, len(bs))
	s.mu.Lock()
	defer s.mu.Unlock()
	decide(bs, vs, now, veto,
		func(_ int, k string) (int64, bool) { tat, ok := s.tats[k]; return tat, ok },
		func(k string, tat int64) {
			if _, ok := s.tats[k]; !ok && len(s.tats) >= s.max {
				s.evict(now)
			}
			s.tats[k] = tat
		})
	return vs
}

// evict drops every full bucket and then, while more than 3/4 of max remain,
// arbitrary ones, so that the next sweep is max/4 new buckets away.
func (s *localBuckets) evict(now int64) {
	for k, tat := range s.tats {
		if tat <= now {
			delete(s.tats, k)
		}
	}
	for k := range s.tats {
		if len(s.tats) <= s.max*3/4 {
			break
		}
		delete(s.tats, k)
	}
}

func (s *localBuckets) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tats)
}

// denial is a refusal remembered: until is when a token can first exist again,
// reset when the bucket can first be full again, both µs on the limiter's clock.
type denial struct{ until, reset int64 }

// denials is the near cache of one limit's refusals: once key K was refused until
// T, this instance refuses K again until T without asking Redis, since no token can
// appear sooner. Bounded (expired entries go first, then arbitrary ones) and
// sharded; safe for concurrent use. A limit whose setting changes gets a new one.
type denials struct {
	seed   maphash.Seed
	max    int // per shard
	shards [16]denialShard
}

type denialShard struct {
	mu sync.RWMutex
	m  map[string]denial
}

func newDenials(size int) *denials {
	c := &denials{seed: maphash.MakeSeed(), max: max(1, size/16)}
	for i := range c.shards {
		c.shards[i].m = make(map[string]denial)
	}
	return c
}

func (c *denials) shard(key string) *denialShard {
	return &c.shards[maphash.String(c.seed, key)%uint64(len(c.shards))]
}

// get returns the denial of key still in force at now.
func (c *denials) get(key string, now int64) (denial, bool) {
	sh := c.shard(key)
	sh.mu.RLock()
	d, ok := sh.m[key]
	sh.mu.RUnlock()
	return d, ok && d.until > now
}

// put remembers that key is refused until d.until.
func (c *denials) put(key string, d denial, now int64) {
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[key]; !ok && len(sh.m) >= c.max {
		for k, old := range sh.m {
			if old.until <= now {
				delete(sh.m, k)
			}
		}
		for k := range sh.m {
			if len(sh.m) <= c.max*3/4 {
				break
			}
			delete(sh.m, k)
		}
	}
	sh.m[key] = d
}

func (c *denials) len() int {
	n := 0
	for i := range c.shards {
		c.shards[i].mu.RLock()
		n += len(c.shards[i].m)
		c.shards[i].mu.RUnlock()
	}
	return n
}
