package guard_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stagedoor/stagedoor/internal/guard"
)

// Two calls fail, the breaker opens, and the next call is refused without
// running; a call whose caller went away counts for nothing.
func Example() {
	g := guard.New(guard.Options{Name: "redis", Failures: 2, Cooldown: time.Minute})
	ctx := context.Background()
	down := errors.New("connection refused")
	calls := 0
	call := func(context.Context) error { calls++; return down }

	gone, cancel := context.WithCancel(ctx)
	cancel()
	fmt.Println(g.Do(gone, call)) // the caller left: not counted
	fmt.Println(g.Do(ctx, call))
	fmt.Println(g.Do(ctx, call))
	err := g.Do(ctx, call)
	fmt.Println(err, errors.Is(err, guard.ErrOpen), calls)
	// Output:
	// context canceled
	// connection refused
	// connection refused
	// redis: circuit breaker open true 3
}

// A call gets the guard's deadline.
func ExampleGuard_Do_deadline() {
	g := guard.New(guard.Options{Timeout: 20 * time.Millisecond})
	err := g.Do(context.Background(), func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	fmt.Println(err)
	// Output: context deadline exceeded
}
