// Command stagedoor is the Stagedoor ticketing API and its tools:
//
//	stagedoor [serve]             apply pending migrations, then serve the API
//	stagedoor migrate             apply pending migrations and exit
//	stagedoor payrail             serve the Payrail payment stub
//	stagedoor seed [-env-file F]  apply pending migrations, make the demo data, print it
//	                              as shell assignments and write them to F (.env.demo)
//	stagedoor demo [-url U] [-env-file F]
//	                              run the whole flow against a running Stagedoor (default
//	                              http://127.0.0.1:8080) with the demo data of F
//	stagedoor healthcheck [URL]   exit 0 when URL (default: this instance's /healthz) answers 200
//
// The rate-limiting lab is a command of its own, cmd/ratelimit-lab (docs/lab.md).
//
// Configuration comes from the environment (see docs/configuration.md). A bad value stops
// the program with exit code 2 and a message that names the variable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stagedoor:", err)
		os.Exit(exitCode(err))
	}
}

// usageError is a command line that names no known command.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCode is 2 for a bad command line or configuration, 1 for anything else.
func exitCode(err error) int {
	var cfgErr *config.Error
	var useErr usageError
	if errors.As(err, &cfgErr) || errors.As(err, &useErr) {
		return 2
	}
	return 1
}

const usage = `usage: stagedoor [serve | migrate | payrail | seed [-env-file PATH] | demo [-url URL] [-env-file PATH] | healthcheck [URL]]`

// run is the whole program: main only adds the process's signals, arguments,
// environment and standard streams, so tests can start it on port 0.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	command := "serve"
	if len(args) > 0 {
		command, args = args[0], args[1:]
	}
	switch command {
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	case "healthcheck":
		return healthcheck(ctx, args, getenv)
	case "demo": // a client of a running Stagedoor: none of its configuration
		return demo(ctx, args, getenv, stdout, stderr)
	}

	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	// Every line names the program that wrote it: make run interleaves two.
	program := "stagedoor"
	if command == "payrail" {
		program = "payrail"
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat, program)
	redis.SetLogger(conn.RedisLogger(logger)) // go-redis's own lines, in the same format
	switch command {
	case "serve":
		return serve(ctx, cfg, logger)
	case "migrate":
		return migrate(ctx, cfg, logger)
	case "payrail":
		return servePayrail(ctx, cfg, logger)
	case "seed":
		return seed(ctx, cfg, logger, args, getenv, stdout, stderr)
	default:
		return usageError{fmt.Sprintf("unknown command %q\n%s", command, usage)}
	}
}
