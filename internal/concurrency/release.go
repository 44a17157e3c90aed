package concurrency

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/guard"
)

// releases gathers the leases given back while a removal is on its way to
// Redis, so that those of many requests go in one pipelined round per node
// rather than one round trip each: under load most of the cost of a ZREM is
// its round trip (two system calls here, two in Redis), not the command. No
// release waits for a timer: the first one of an idle limiter is sent at
// once, and those that come while it is on its way go together as soon as it
// is back. Each release returns once its own lease was removed (or its call
// failed), as a lone ZREM did.
type releases struct {
	mu   sync.Mutex
	next *releaseBatch // the leases waiting for the round on its way
	busy bool          // a round is on its way: its sender sends the next batch too
}

// releaseBatch is the leases removed in one round, and done is closed once
// that round has ended.
type releaseBatch struct {
	leases []*lease
	done   chan struct{}
}

// remove removes ls from Redis, with the other leases given back meanwhile.
func (l *Limiter) remove(ls *lease) {
	r := &l.released
	r.mu.Lock()
	if r.next == nil {
		r.next = &releaseBatch{done: make(chan struct{})}
	}
	b := r.next
	b.leases = append(b.leases, ls)
	if r.busy {
		r.mu.Unlock()
		<-b.done
		return
	}
	r.busy = true
	r.mu.Unlock()
	for {
		r.mu.Lock()
		b := r.next
		r.next = nil
		if b == nil {
			r.busy = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		l.removeAll(b.leases)
		close(b.done)
	}
}

// removeAll removes leases from Redis: one pipelined round per node, the nodes
// in parallel, each under its node's deadline and breaker. A lease whose
// removal fails lapses after Lease.
func (l *Limiter) removeAll(leases []*lease) {
	ctx := context.Background()
	if len(leases) == 1 {
		ls := leases[0]
		_ = l.nodes.For(ctx, ls.key).Do(ctx, func(rctx context.Context) error {
			return l.rdb.ZRem(rctx, ls.key, ls.id).Err()
		})
		return
	}
	type group struct {
		g      *guard.NodeGuard
		leases []*lease
	}
	var groups []*group
	byNode := map[string]*group{}
	for _, ls := range leases {
		g := l.nodes.For(ctx, ls.key)
		gr, ok := byNode[g.Node()]
		if !ok {
			gr = &group{g: g}
			byNode[g.Node()] = gr
			groups = append(groups, gr)
		}
		gr.leases = append(gr.leases, ls)
	}
	var wg sync.WaitGroup
	for _, gr := range groups {
		wg.Go(func() {
			_ = gr.g.Do(ctx, func(rctx context.Context) error {
				_, err := l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
					for _, ls := range gr.leases {
						p.ZRem(rctx, ls.key, ls.id)
					}
					return nil
				})
				return err
			})
		})
	}
	wg.Wait()
}
