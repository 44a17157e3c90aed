package concurrency

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stagedoor/stagedoor/internal/guard"
	"github.com/stagedoor/stagedoor/internal/protect"
)

// lease is one request's place in an identity's set, as this instance knows it.
type lease struct {
	key, id string
	done    atomic.Bool // released
	lost    atomic.Bool // found gone from Redis at a renewal: no longer renewed
}

// registry holds this instance's live leases, for Run to renew. Most requests
// last milliseconds, so it is usually small: a map under a mutex is cheaper
// than the Redis call of each Enter by three orders of magnitude.
type registry struct {
	mu sync.Mutex
	m  map[*lease]struct{}
}

func (r *registry) init() { r.m = make(map[*lease]struct{}) }

func (r *registry) add(ls *lease) {
	r.mu.Lock()
	r.m[ls] = struct{}{}
	r.mu.Unlock()
}

func (r *registry) remove(ls *lease) {
	r.mu.Lock()
	delete(r.m, ls)
	r.mu.Unlock()
}

// len is the number of live leases.
func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// leaseSet is the leases this instance holds in one identity's set.
type leaseSet struct {
	key    string
	leases []*lease
}

// snapshot is the live leases not known to be lost, grouped by key.
func (r *registry) snapshot() []leaseSet {
	r.mu.Lock()
	byKey := make(map[string]int, len(r.m))
	var sets []leaseSet
	for ls := range r.m {
		if ls.lost.Load() {
			continue
		}
		i, ok := byKey[ls.key]
		if !ok {
			i = len(sets)
			byKey[ls.key] = i
			sets = append(sets, leaseSet{key: ls.key})
		}
		sets[i].leases = append(sets[i].leases, ls)
	}
	r.mu.Unlock()
	return sets
}

// Run renews the leases of the requests still running on this instance every
// Lease/3, in one pipelined round per Redis node (the nodes in parallel),
// until ctx ends. Without it a request that runs longer than Lease loses its
// lease, and its identity gets a place more than it should.
//
// A renewal that Redis cannot answer is tried again at the next tick; a lease
// already gone from Redis (it lapsed while Redis was out of reach, and another
// request dropped it) is not taken again, since its place may have been given
// away: it is logged and no longer renewed.
func (l *Limiter) Run(ctx context.Context) {
	protect.Every(ctx, l.lease/3, func(ctx context.Context) { l.renew(ctx) })
}

// renew renews every live lease once, and returns how many it renewed and how
// many it found lost.
func (l *Limiter) renew(ctx context.Context) (renewed, lost int) {
	sets := l.leases.snapshot()
	if len(sets) == 0 {
		return 0, 0
	}
	type group struct {
		g    *guard.NodeGuard
		sets []leaseSet
	}
	groups := map[string]*group{}
	for _, s := range sets {
		g := l.nodes.For(ctx, s.key)
		gr, ok := groups[g.Node()]
		if !ok {
			gr = &group{g: g}
			groups[g.Node()] = gr
		}
		gr.sets = append(gr.sets, s)
	}
	// A renewal is not on any request's path: it may take longer than one
	// request's call, but must end before the next tick.
	wait := max(l.nodes.Timeout(), l.lease/6)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, gr := range groups {
		wg.Go(func() {
			var res [][]bool
			err := gr.g.DoUntil(ctx, time.Now().Add(wait), func(rctx context.Context) error {
				var err error
				res, err = renewKeys(rctx, l.rdb, l.leaseMS, gr.sets)
				return err
			})
			if err != nil {
				return // counted and logged by the node's guard; tried again next tick
			}
			r, n := 0, 0
			for i, s := range gr.sets {
				for j, ok := range res[i] {
					switch ls := s.leases[j]; {
					case ok:
						r++
					case !ls.done.Load() && ls.lost.CompareAndSwap(false, true):
						n++
					}
				}
			}
			mu.Lock()
			renewed, lost = renewed+r, lost+n
			mu.Unlock()
		})
	}
	wg.Wait()
	if lost > 0 {
		l.logger.Warn("concurrency leases lost before their renewal: their requests are no longer counted",
			"limit", string(l.name), "lost", lost, "lease", l.lease.String())
	}
	return renewed, lost
}
