// Command ratelimit-lab is the rate-limiting lab (docs/lab.md): four
// algorithms, Stagedoor's limiter and two Go libraries measured side by side
// against the Redis of REDIS_URL (default redis://127.0.0.1:6379/0).
//
//	ratelimit-lab [-out DIR] [-quick] [-experiments 1,2,3,4,5]
//
// It is a tool of its own, apart from the server: the libraries it measures
// are none of the server's dependencies.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/stagedoor/stagedoor/internal/ratelimit/lab"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("program", "ratelimit-lab")
	err := lab.Main(ctx, url, os.Args[1:], os.Stdout, logger)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelimit-lab:", err)
		os.Exit(1)
	}
}
