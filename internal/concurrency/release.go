package concurrency

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/guard"
)

// releases gathers the leases given back while a removal is on its way to
// their node, so that those of many requests go in one pipelined round per
// node rather than one round trip each: under load most of the cost of a ZREM
// is its round trip (two system calls here, two in Redis), not the command.
// No release waits for a timer: the first one to an idle node is sent at once,
// and those that come while it is on its way go together as soon as it is
// back. Each node has its own queue, so a dead or stalled node holds up only
// the leases it serves, never another node's. Each release returns once its
// own lease was removed (or its call failed), as a lone ZREM did.
type releases struct {
	mu    sync.Mutex
	nodes map[string]*nodeReleases // by node (guard.NodeGuard.Node)
}

// nodeReleases is one node's queue: next is the leases waiting for the round
// on its way, and busy says a round is on its way (its sender sends the next
// batch too).
type nodeReleases struct {
	g    *guard.NodeGuard
	next *releaseBatch
	busy bool
}

// releaseBatch is the leases removed in one round, and done is closed once
// that round has ended.
type releaseBatch struct {
	leases []*lease
	done   chan struct{}
}

// remove removes ls from Redis, with the other leases of its node given back
// meanwhile.
func (l *Limiter) remove(ls *lease) {
	g := l.nodes.For(context.Background(), ls.key)
	r := &l.released
	r.mu.Lock()
	if r.nodes == nil {
		r.nodes = map[string]*nodeReleases{}
	}
	q := r.nodes[g.Node()]
	if q == nil {
		q = &nodeReleases{g: g}
		r.nodes[g.Node()] = q
	}
	if q.next == nil {
		q.next = &releaseBatch{done: make(chan struct{})}
	}
	b := q.next
	b.leases = append(b.leases, ls)
	if q.busy {
		r.mu.Unlock()
		<-b.done
		return
	}
	q.busy = true
	r.mu.Unlock()
	for {
		r.mu.Lock()
		b := q.next
		q.next = nil
		if b == nil {
			q.busy = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		l.removeAll(q.g, b.leases)
		close(b.done)
	}
}

// removeAll removes leases of one node from Redis in one pipelined round,
// under its node's deadline and breaker. A lease whose removal fails lapses
// after Lease.
func (l *Limiter) removeAll(g *guard.NodeGuard, leases []*lease) {
	ctx := context.Background()
	_ = g.Do(ctx, func(rctx context.Context) error {
		if len(leases) == 1 {
			return l.rdb.ZRem(rctx, leases[0].key, leases[0].id).Err()
		}
		_, err := l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
			for _, ls := range leases {
				p.ZRem(rctx, ls.key, ls.id)
			}
			return nil
		})
		return err
	})
}
