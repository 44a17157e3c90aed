package onsale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Result is a finished run: what it made, what it saw, what it found.
type Result struct {
	Sale   Sale
	Report *Report
	// Paths of the files written to Options.Out (empty without it).
	JSONPath, HTMLPath, RequestsPath, BuyersPath string
}

// Passed says whether every check passed.
func (r *Result) Passed() bool { return r.Report.Passed }

// Run prepares the sale, plays it, checks it and writes its report. An error
// means the run could not be made (Stagedoor unreachable, a setup step
// refused); a sale that ran and failed its checks is a Result whose Passed is
// false.
func Run(ctx context.Context, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.SourceAddrs {
		if err := checkSourceAddrs(); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	rec := newRecorder(started)
	var orgAddr net.IP
	if o.SourceAddrs {
		orgAddr = organizerAddr
	}
	setup := newClient(setupClient, o.URL, "", newTransport(orgAddr), rec, o.Seed)
	defer setup.http.CloseIdleConnections()
	if _, err := organizer(ctx, setup, o); err != nil {
		return nil, err
	}
	limits, err := readLimits(ctx, setup, o.AdminToken)
	if err != nil {
		return nil, err
	}
	prepStart := time.Now()
	accts, err := prepareAccounts(ctx, o)
	if err != nil {
		return nil, err
	}
	prepared := time.Since(prepStart)
	sale, err := createEvent(ctx, setup, o)
	if err != nil {
		return nil, err
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "onsale: %d buyers and %d bots prepared in %s; event %s, %d seats, on sale at %s (in %s)%s\n",
			o.Buyers, o.Bots, prepared.Round(time.Millisecond), sale.EventID, o.Seats,
			sale.OnSaleAt.Local().Format("15:04:05.000"), time.Until(sale.OnSaleAt).Round(100*time.Millisecond), roomText(o.RoomRate))
	}
	p := play(ctx, o, sale, accts, rec, limits.holdBuyer())
	// A sale cut short (ctx ended: Ctrl-C) is still checked and reported.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checksTimeout)
	defer cancel()
	checks := runChecks(cctx, checkInput{opts: o, sale: sale, accts: accts, rec: rec, buyers: p.buyers, limits: limits})
	report := buildReport(o, sale, rec, p, checks, limits, prepared, started)
	res := &Result{Sale: sale, Report: report}
	if o.Out != "" {
		if err := res.write(o.Out, rec, p.buyers); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checksTimeout bounds the checks' queries once the sale is over.
const checksTimeout = time.Minute

func roomText(rate int) string {
	if rate == 0 {
		return ", no waiting room"
	}
	return fmt.Sprintf(", waiting room %d/s", rate)
}

// played is what the play left: every buyer's state, the faults run, and
// when it ended.
type played struct {
	buyers  []*buyerState
	faults  []FaultResult
	ended   time.Time
	pollers *PollerStats // with Options.Pollers
}

// FaultResult is a fault as it ran.
type FaultResult struct {
	Name string `json:"name"`
	// At is when it ran, in seconds after on_sale_at; Took how long it took.
	At    float64 `json:"at_s"`
	Took  float64 `json:"took_s"`
	Error string  `json:"error,omitempty"`
}

// play runs the sale: every buyer arrives at her time, the bots hammer from
// Spread before the opening until the last buyer is done, the faults run at
// their times, and a progress line is written every second.
func play(ctx context.Context, o Options, sale Sale, accts accounts, rec *recorder, holdLimit LimitSetting) played {
	ctx, cut := context.WithDeadline(ctx, sale.OnSaleAt.Add(o.MaxDuration))
	defer cut()
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0))
	now := time.Now()
	out := played{buyers: make([]*buyerState, len(accts.buyers))}
	crowd := startCrowd(ctx, o, sale, accts, rec)
	var buyers sync.WaitGroup
	for i, s := range accts.buyers {
		arrive := sale.OnSaleAt.Add(time.Duration(rng.NormFloat64() * float64(o.Spread)))
		out.buyers[i] = &buyerState{arrive: maxTime(arrive, now)}
		var local net.IP
		if o.SourceAddrs {
			local = buyerAddr(i)
		}
		b := &buyer{client: newClient(int32(i), o.URL, s.Token, newTransport(local), rec, o.Seed),
			sale: sale, opts: o, state: out.buyers[i]}
		if i < o.Greedy {
			b.hoard = greedyHolds(holdLimit)
		}
		buyers.Go(func() {
			defer b.http.CloseIdleConnections()
			b.visit(ctx)
			rec.done.Add(1)
		})
	}

	botCtx, stopBots := context.WithCancel(ctx)
	var bots sync.WaitGroup
	for j, s := range accts.bots {
		var local net.IP
		if o.SourceAddrs {
			local = botAddr(j, o.BotAddrs)
		}
		b := &bot{client: newClient(int32(len(accts.buyers)+j), o.URL, s.Token, newTransport(local), rec, o.Seed),
			sale: sale, pause: o.BotPause}
		bots.Go(func() {
			defer b.http.CloseIdleConnections()
			b.run(botCtx, sale.OnSaleAt.Add(-o.Spread))
		})
	}

	var faults sync.WaitGroup
	var mu sync.Mutex
	for _, f := range o.Faults {
		faults.Go(func() {
			if !sleep(ctx, time.Until(sale.OnSaleAt.Add(f.At))) {
				return
			}
			start := time.Now()
			err := f.Do(context.WithoutCancel(ctx), sale)
			r := FaultResult{Name: f.Name, At: start.Sub(sale.OnSaleAt).Seconds(), Took: time.Since(start).Seconds()}
			if err != nil {
				r.Error = err.Error()
			}
			mu.Lock()
			out.faults = append(out.faults, r)
			mu.Unlock()
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "onsale: fault %q at T+%.1fs (took %.1fs)%s\n", r.Name, r.At, r.Took, errText(r.Error))
			}
		})
	}

	stopProgress := progress(o, sale, rec)
	buyers.Wait()
	out.ended = time.Now()
	if crowd != nil {
		st := crowd.finish(ctx)
		out.pollers = &st
	}
	stopBots()
	bots.Wait()
	cut() // a fault not yet run is not run
	faults.Wait()
	stopProgress()
	return out
}

// maxGreedyHolds bounds a greedy buyer's holds: a limit that allows more in a
// window is not put to the test by her.
const maxGreedyHolds = 100

// greedyHolds is how many holds a greedy buyer places first: three more than
// hold-buyer allows in any window (its burst and a period's tokens), or none
// when that is over maxGreedyHolds.
func greedyHolds(l LimitSetting) int {
	if n := l.Burst + l.Rate + 3; n <= maxGreedyHolds {
		return n
	}
	return 0
}

func errText(err string) string {
	if err == "" {
		return ""
	}
	return ": " + err
}
