// Command onsale is the on-sale simulator (internal/onsale): it prepares an
// event and thousands of buyers and bots, plays the sale against any
// Stagedoor URL, checks the outcome against PostgreSQL, and writes a report.
//
//	go run ./cmd/onsale -url http://127.0.0.1:8080 -database-url "$DATABASE_URL" \
//	    -buyers 5000 -bots 200 -seats 1000 -room-rate 50
//
// It exits 0 when every check passed, 1 when one failed, 2 when the run could
// not be made (a bad flag, Stagedoor or PostgreSQL unreachable). docs/onsale.md
// describes the flags, the checks and the report.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/onsale"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// flags are the command line, besides the library's Options.
type flags struct {
	o                       onsale.Options
	databaseURL, payrailURL string
	sourceAddrs             string
	redisAt, instanceAt     time.Duration
	redisCmd, instanceCmd   string
	quiet                   bool
	render                  string // a report.json to render again
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (flags, error) {
	d := onsale.Defaults
	var f flags
	fs := flag.NewFlagSet("onsale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.o.URL, "url", cmp.Or(getenv("STAGEDOOR_URL"), "http://127.0.0.1:8080"), "where Stagedoor answers: the edge, or one instance (default $STAGEDOOR_URL, else http://127.0.0.1:8080)")
	databaseURL := getenv("STAGEDOOR_DIRECT_DATABASE_URL") // PostgreSQL itself, when DATABASE_URL is a transaction pooler
	if databaseURL == "" {
		databaseURL = getenv("DATABASE_URL")
	}
	fs.StringVar(&f.databaseURL, "database-url", databaseURL,
		"Stagedoor's database, PostgreSQL itself: accounts are prepared in it, the checks read it (default $STAGEDOOR_DIRECT_DATABASE_URL, else $DATABASE_URL)")
	fs.StringVar(&f.payrailURL, "payrail-database-url", "", "Payrail's ledger (schema payrail), when not in Stagedoor's database")
	fs.IntVar(&f.o.Buyers, "buyers", d.Buyers, "buyers who arrive for the sale")
	fs.IntVar(&f.o.Bots, "bots", d.Bots, "bots: scripts that ignore the queue and hammer holds")
	fs.IntVar(&f.o.Seats, "seats", d.Seats, "the event's seats")
	fs.IntVar(&f.o.RoomRate, "room-rate", d.RoomRate, "the waiting room's admissions a second; 0: no waiting room")
	fs.DurationVar(&f.o.Lead, "lead", d.Lead, "how long after the event is made its sale opens")
	fs.DurationVar(&f.o.Spread, "spread", d.Spread, "the standard deviation of the buyers' arrivals around the opening")
	fs.Float64Var(&f.o.DeclineRate, "decline-rate", d.DeclineRate, "the share of buyers whose first card is declined")
	fs.Int64Var(&f.o.PriceCents, "price-cents", d.PriceCents, "the best seats' price")
	fs.IntVar(&f.o.MaxHoldTries, "max-hold-tries", d.MaxHoldTries, "holds a buyer tries before giving up")
	fs.IntVar(&f.o.Pollers, "pollers", 0, "buyers who only wait in the room, polling at the page's cadence (the cheap part of a crowd)")
	fs.IntVar(&f.o.PollerConns, "poller-conns", 0, "connections the pollers share, an address each (default: one for every 40 pollers, at least 16)")
	fs.StringVar(&f.o.RedisURL, "redis-url", getenv("REDIS_URL"), "Stagedoor's Redis (a URL, or the cluster's host:port,…): its INFO commandstats and cpu are read before and after each phase (default $REDIS_URL)")
	fs.IntVar(&f.o.Greedy, "greedy", d.Greedy, "buyers that first place and give back three more holds than hold-buyer allows in a window (tests the per-buyer limit behind a waiting room)")
	fs.DurationVar(&f.o.BotPause, "bot-pause", d.BotPause, "a bot's pause between two requests (0: none, as fast as answers come)")
	fs.IntVar(&f.o.BotAddrs, "bot-addrs", d.BotAddrs, "client addresses the bots share")
	fs.StringVar(&f.sourceAddrs, "source-addrs", "auto", "each client dials from a 127/8 address of its own: true, false, or auto (when -url is on the loopback)")
	fs.DurationVar(&f.o.MaxDuration, "max-duration", d.MaxDuration, "the sale is cut this long after its opening")
	fs.DurationVar(&f.o.AdmissionLength, "admission", d.AdmissionLength, "how long an admission lasts on the instances")
	fs.StringVar(&f.o.AdminToken, "admin-token", getenv("STAGEDOOR_ADMIN_TOKEN"), "reads the hold-buyer limit in force (default $STAGEDOOR_ADMIN_TOKEN); without it 10/1m is assumed")
	fs.IntVar(&f.o.BcryptCost, "bcrypt-cost", d.BcryptCost, "the bcrypt cost of the accounts' one password hash (the instances' STAGEDOOR_BCRYPT_COST)")
	fs.StringVar(&f.o.OrganizerEmail, "organizer-email", d.OrganizerEmail, "the organizer's account (signed up, or logged in to)")
	fs.StringVar(&f.o.Password, "password", d.Password, "every account's password")
	fs.StringVar(&f.o.EmailPrefix, "email-prefix", d.EmailPrefix, "starts the buyers' and bots' emails; the same prefix reuses the accounts")
	fs.StringVar(&f.o.Out, "out", "", "the report's directory (default: a new temporary one)")
	fs.Int64Var(&f.o.Seed, "seed", 0, "seeds the arrivals and choices (default: the clock)")
	fs.DurationVar(&f.redisAt, "fault-redis-at", 0, "when, after the opening, to run -fault-redis-cmd")
	fs.StringVar(&f.redisCmd, "fault-redis-cmd", "", "a command that kills a Redis master (bash -c), such as \"bash scripts/cluster/kill-redis-master.sh\"")
	fs.DurationVar(&f.instanceAt, "fault-instance-at", 0, "when, after the opening, to run -fault-instance-cmd")
	fs.StringVar(&f.instanceCmd, "fault-instance-cmd", "", "a command that kills an instance (bash -c), such as \"bash scripts/cluster/kill-instance.sh 2\"")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line every second")
	fs.StringVar(&f.render, "render", "", "only write the HTML page of a report.json again, beside it, and exit")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("onsale: unexpected arguments %q", fs.Args())
	}
	if f.render != "" {
		return f, nil
	}
	if f.databaseURL == "" {
		return f, errors.New("onsale: -database-url (or DATABASE_URL) is required: the buyers are prepared in Stagedoor's database and the checks read it")
	}
	switch f.sourceAddrs {
	case "true", "false":
		f.o.SourceAddrs = f.sourceAddrs == "true"
	case "auto":
		f.o.SourceAddrs = onLoopback(f.o.URL)
	default:
		return f, fmt.Errorf("onsale: -source-addrs %q: want true, false or auto", f.sourceAddrs)
	}
	for _, fault := range []struct {
		name string
		at   time.Duration
		cmd  string
	}{{"kill a Redis master", f.redisAt, f.redisCmd}, {"kill an instance", f.instanceAt, f.instanceCmd}} {
		if fault.cmd != "" {
			f.o.Faults = append(f.o.Faults, commandFault(fault.name, fault.at, fault.cmd, stderr))
		}
	}
	return f, nil
}

// render writes report.html beside the report.json at path, from it.
func render(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r onsale.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Create(filepath.Join(filepath.Dir(path), "report.html"))
	if err != nil {
		return err
	}
	if err := r.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// onLoopback says whether rawURL's host is a loopback address (or localhost).
func onLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// run is the whole command, with its exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	f, err := parse(args, getenv, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	if f.render != "" {
		if err := render(f.render); err != nil {
			fmt.Fprintln(stderr, "onsale:", err)
			return 2
		}
		fmt.Fprintln(stdout, filepath.Join(filepath.Dir(f.render), "report.html"))
		return 0
	}
	db, err := conn.Postgres(ctx, f.databaseURL, 4) // preparing and checking: one query at a time
	if err != nil {
		fmt.Fprintln(stderr, "onsale:", err)
		return 2
	}
	defer db.Close()
	f.o.DB = db
	if f.payrailURL != "" {
		pr, err := conn.Postgres(ctx, f.payrailURL, 2)
		if err != nil {
			fmt.Fprintln(stderr, "onsale: -payrail-database-url:", err)
			return 2
		}
		defer pr.Close()
		f.o.PayrailDB = pr
	}
	if f.o.Out == "" {
		if f.o.Out, err = os.MkdirTemp("", "onsale-"); err != nil {
			fmt.Fprintln(stderr, "onsale:", err)
			return 2
		}
	}
	if !f.quiet {
		f.o.Progress = stderr
	}
	res, err := onsale.Run(ctx, f.o)
	if res != nil {
		res.PrintSummary(stdout)
	}
	switch {
	case err != nil: // no sale, or its report not written
		fmt.Fprintln(stderr, err)
		return 2
	case !res.Passed():
		return 1
	}
	return 0
}
