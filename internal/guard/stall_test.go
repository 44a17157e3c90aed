package guard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
)

// TestAStallIsOneFailureNotMany: the calls in flight together when a node
// stalls past their deadline all fail at once. They are one failure of the
// node, not many in a row: the breaker stays closed, and the next call is
// made (a healthy Redis master whose breaker opened would fail every key it
// serves for the cooldown). Each failure returns its own error.
func TestAStallIsOneFailureNotMany(t *testing.T) {
	g := New(Options{Name: "stalled", Failures: 5, Cooldown: time.Minute})
	ctx := context.Background()
	stalled := make(chan struct{})
	var inCall, done sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		inCall.Add(1)
		done.Go(func() {
			errs[i] = g.Do(ctx, func(context.Context) error {
				inCall.Done()
				<-stalled // every call waits on the same stall
				return context.DeadlineExceeded
			})
		})
	}
	inCall.Wait() // all 20 are under way
	close(stalled)
	done.Wait()
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d: %v, want its deadline exceeded", i, err)
		}
	}
	if st := g.State(); st != gobreaker.StateClosed {
		t.Fatalf("after one stall of 20 calls in flight the breaker is %v, want closed", st)
	}
	called := false
	if err := g.Do(ctx, func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Errorf("the call after the stall: %v (made: %v), want it made", err, called)
	}
}

// TestFailuresOneAfterAnotherOpenIt: a dead node's calls fail one after the
// other, each started after the last failed: Failures of them open the
// breaker, however many calls were in flight when the first failed; a
// success between them starts the count again.
func TestFailuresOneAfterAnotherOpenIt(t *testing.T) {
	g := New(Options{Name: "dead", Failures: 3, Cooldown: time.Minute})
	ctx := context.Background()
	refused := errors.New("connection refused")
	fail := func(context.Context) error { return refused }

	_ = g.Do(ctx, fail)
	_ = g.Do(ctx, fail)
	_ = g.Do(ctx, func(context.Context) error { return nil }) // the node answered: a new count
	_ = g.Do(ctx, fail)
	_ = g.Do(ctx, fail)
	if st := g.State(); st != gobreaker.StateClosed {
		t.Fatalf("after 2 failures, a success and 2 failures the breaker is %v, want closed", st)
	}
	if err := g.Do(ctx, fail); !errors.Is(err, refused) {
		t.Fatalf("the third failure in a row: %v", err)
	}
	if err := g.Do(ctx, fail); !errors.Is(err, ErrOpen) {
		t.Errorf("after 3 failures in a row: %v, want the breaker open", err)
	}
}
