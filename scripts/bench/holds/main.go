// Command holds is a black-box load of holds against any Stagedoor, through its
// HTTP API alone, so that two builds (this one and an older one, say), or two
// kinds of hold, can be measured with the same harness and the same settings:
//
//	go run ./scripts/bench/holds -url http://127.0.0.1:8080 -buyers 100 -seats 10000 -holds 20000
//	go run ./scripts/bench/holds -url http://127.0.0.1:8080 -buyers 100 -seats 10000 -holds 10000 -kind both -rounds 4
//
// It signs up an organizer and -buyers buyers, logs each in, creates two
// events on sale now, one of -seats seats and one of a section of general
// admission of -seats places, and then has every buyer hold 2 random seats
// (-kind seated), or 2 places (-kind general), again and again, releasing her
// previous hold after each one placed (as BenchmarkHolds does: about 2 seats
// of each buyer held at any moment, the event never sold out), until -holds
// holds are placed. -kind both plays the two kinds in turn, -rounds times each,
// on the same instance, buyers and database, and prints the ratio. With -cpu
// (the instance's process id and PostgreSQL's postmaster's, say) it also
// prints the CPU those processes and their descendants spent a hold placed
// (its release included), which what else the machine runs disturbs less
// than holds a second. It prints
// the holds placed a second over each play, the share refused (409: a seat
// taken), and the latency of a hold. Run the server with its limits out of the
// way: the hold limits, login-address and login-email (and signup-address,
// where it exists) high, as scripts/bench/holds.sh does. (A build older than
// general admission refuses the general event: play it -kind seated.)
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the Stagedoor to load")
	buyers := flag.Int("buyers", 100, "buyers holding at once")
	seats := flag.Int("seats", 10000, "seats of the event (100 a row)")
	holds := flag.Int("holds", 20000, "holds to place (in each play)")
	kind := flag.String("kind", "seated", "what each hold takes: seated (2 random seats), general (2 places of a section of general admission), or both, in turn")
	rounds := flag.Int("rounds", 1, "plays of each kind")
	cpu := flag.String("cpu", "", "process ids (comma-separated) whose CPU a hold costs is measured, with their descendants: "+
		"the instance's and PostgreSQL's postmaster, say")
	flag.Parse()
	var cpuPIDs []int
	for _, f := range strings.FieldsFunc(*cpu, func(r rune) bool { return r == ',' }) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "holds: -cpu lists process ids, such as 1234,5678")
			os.Exit(2)
		}
		cpuPIDs = append(cpuPIDs, pid)
	}
	if *kind != "seated" && *kind != "general" && *kind != "both" {
		fmt.Fprintln(os.Stderr, "holds: -kind is seated, general or both")
		os.Exit(2)
	}
	if err := run(*url, *buyers, *seats, *holds, *kind, *rounds, cpuPIDs); err != nil {
		fmt.Fprintln(os.Stderr, "holds:", err)
		os.Exit(1)
	}
}

type client struct {
	base string
	http *http.Client
}

// call sends one request and decodes a JSON answer into out (when not nil); it
// returns the status.
func (c client) call(method, path, token string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	if resp.StatusCode >= 500 || resp.StatusCode == 401 {
		return resp.StatusCode, fmt.Errorf("%s %s = %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

// account signs up an account of kind ("buyers" or "organizers") and logs it
// in; it returns the session token.
func (c client) account(kind string) (string, error) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	email := "bench-" + hex.EncodeToString(id[:]) + "@example.com"
	cred := map[string]string{"email": email, "password": "bench-password-1234", "name": "Bench"}
	if st, err := c.call("POST", "/v1/"+kind, "", cred, nil); err != nil || st != 201 {
		return "", fmt.Errorf("sign up: %d %v", st, err)
	}
	var session struct{ Token string }
	if st, err := c.call("POST", "/v1/login", "", map[string]string{"email": email, "password": cred["password"]}, &session); err != nil || st != 200 {
		return "", fmt.Errorf("log in: %d %v", st, err)
	}
	return session.Token, nil
}

// load is what a play needs: the buyers' tokens and the two events.
type load struct {
	cpuPIDs []int // whose CPU a hold costs is measured (-cpu)
	c       client
	tokens  []string
	eventID map[string]string // by kind: "seated", "general"
	seats   []string          // the seated event's seats
	section string            // the general event's section of places
}

// prepare signs up an organizer and the buyers, and makes an event on sale now
// for each of kinds: of nSeats seats (100 a row), or of a section of general
// admission of nSeats places.
func prepare(base string, nBuyers, nSeats int, kinds []string) (*load, error) {
	l := &load{c: client{base: base, http: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 2 * nBuyers, MaxIdleConnsPerHost: 2 * nBuyers}}},
		eventID: map[string]string{}}
	org, err := l.c.account("organizers")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	sections := map[string]map[string]any{
		"seated":  {"name": "Floor", "rows": nSeats / 100, "seats_per_row": 100, "price_cents": 4500},
		"general": {"name": "Floor", "general_admission": true, "capacity": nSeats, "price_cents": 4500},
	}
	for _, kind := range kinds {
		section := sections[kind]
		ev := map[string]any{"name": "Bench night", "venue": "Hall", "currency": "USD",
			"starts_at": now.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339), "on_sale_at": now.Add(-time.Minute).UTC().Format(time.RFC3339),
			"sections": []map[string]any{section}}
		var event struct {
			ID       string
			Sections []struct{ ID string }
		}
		if st, err := l.c.call("POST", "/v1/events", org, ev, &event); err != nil || st != 201 {
			return nil, fmt.Errorf("create the %s event: %d %v", kind, st, err)
		}
		l.eventID[kind] = event.ID
		if kind == "general" {
			l.section = event.Sections[0].ID
		}
	}
	if l.eventID["seated"] != "" {
		var seatMap struct{ Seats []struct{ ID string } }
		if _, err := l.c.call("GET", "/v1/events/"+l.eventID["seated"]+"/seats", "", nil, &seatMap); err != nil {
			return nil, err
		}
		for _, s := range seatMap.Seats {
			l.seats = append(l.seats, s.ID)
		}
		if len(l.seats) != nSeats {
			return nil, fmt.Errorf("the event has %d seats, want %d", len(l.seats), nSeats)
		}
	}
	l.tokens = make([]string, nBuyers)
	errs := make([]error, nBuyers)
	var wg sync.WaitGroup
	for i := range l.tokens {
		wg.Go(func() { l.tokens[i], errs[i] = l.c.account("buyers") })
	}
	wg.Wait()
	return l, errors.Join(errs...)
}

// holdBody is a hold of two: two random seats of the seated event, or two
// places of the general event's section.
func (l *load) holdBody(kind string) map[string]any {
	if kind == "general" {
		return map[string]any{"event_id": l.eventID[kind], "general": []map[string]any{{"section_id": l.section, "quantity": 2}}}
	}
	i, j := mrand.IntN(len(l.seats)), mrand.IntN(len(l.seats)-1)
	if j >= i {
		j++
	}
	return map[string]any{"event_id": l.eventID[kind], "seat_ids": []string{l.seats[i], l.seats[j]}}
}

// result is one play's measure.
type result struct {
	kind            string
	perSecond       float64
	placed, limited int64
	refusedShare    float64
	seconds         float64
	p50, p99        time.Duration
	cpuPerHold      time.Duration // of the -cpu processes, a hold placed (and its release); 0 without -cpu
}

// play has every buyer hold two of kind again and again, releasing her
// previous hold after each one placed, until nHolds holds are placed; then
// every buyer releases her last, so that the next play starts as this one did.
func (l *load) play(kind string, nHolds int) (result, error) {
	cpu0, err := cpuTime(l.cpuPIDs)
	if err != nil {
		return result{}, err
	}
	var placed, refused, limited atomic.Int64
	var failed atomic.Value
	lat := make([][]time.Duration, len(l.tokens))
	last := make([]string, len(l.tokens))
	var wg sync.WaitGroup
	start := time.Now()
	for b := range l.tokens {
		wg.Go(func() {
			for placed.Load() < int64(nHolds) && failed.Load() == nil {
				var h struct{ ID string }
				t0 := time.Now()
				st, err := l.c.call("POST", "/v1/holds", l.tokens[b], l.holdBody(kind), &h)
				lat[b] = append(lat[b], time.Since(t0))
				switch {
				case err != nil:
					failed.Store(err)
					return
				case st == 409:
					refused.Add(1)
					continue
				case st == 429: // a limit the server was not told to lift (buyer-concurrency): counted
					limited.Add(1)
					continue
				case st != 201:
					failed.Store(fmt.Errorf("hold = %d", st))
					return
				}
				placed.Add(1)
				if err := l.release(b, last[b]); err != nil {
					failed.Store(err)
					return
				}
				last[b] = h.ID
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return result{}, err
	}
	for b := range l.tokens {
		if err := l.release(b, last[b]); err != nil {
			return result{}, err
		}
	}
	cpu1, err := cpuTime(l.cpuPIDs)
	if err != nil {
		return result{}, err
	}
	var all []time.Duration
	for _, d := range lat {
		all = append(all, d...)
	}
	slices.Sort(all)
	q := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	return result{kind: kind, perSecond: float64(placed.Load()) / elapsed.Seconds(), placed: placed.Load(), limited: limited.Load(),
		refusedShare: 100 * float64(refused.Load()) / float64(placed.Load()+refused.Load()), seconds: elapsed.Seconds(),
		p50: q(0.5).Round(10 * time.Microsecond), p99: q(0.99).Round(10 * time.Microsecond),
		cpuPerHold: (cpu1 - cpu0) / time.Duration(placed.Load())}, nil
}

// cpuTime is the CPU time the processes and all their descendants have used
// (their own, and that of their children that ended: a PostgreSQL server's
// postmaster reaps its backends), from /proc; 0 for no processes.
func cpuTime(pids []int) (time.Duration, error) {
	if len(pids) == 0 {
		return 0, nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	type stat struct {
		ppid  int
		ticks int64
	}
	stats := map[int]stat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid … utime(14) stime(15) cutime(16) cstime(17): after the comm's ")".
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		ppid, _ := strconv.Atoi(f[1])
		var ticks int64
		for _, i := range []int{11, 12, 13, 14} {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
		stats[pid] = stat{ppid, ticks}
	}
	counted := map[int]bool{}
	for _, p := range pids {
		counted[p] = true
	}
	for grew := true; grew; {
		grew = false
		for pid, s := range stats {
			if !counted[pid] && counted[s.ppid] {
				counted[pid], grew = true, true
			}
		}
	}
	var ticks int64
	for pid := range counted {
		ticks += stats[pid].ticks
	}
	return time.Duration(ticks) * time.Second / 100, nil // USER_HZ: 100 on Linux
}

// release gives back buyer b's hold id ("": none).
func (l *load) release(b int, id string) error {
	if id == "" {
		return nil
	}
	if st, err := l.c.call("DELETE", "/v1/holds/"+id, l.tokens[b], nil, nil); err != nil || st != 204 {
		return fmt.Errorf("release = %d %v", st, err)
	}
	return nil
}

// run prepares the load and plays the kinds in turn, rounds times (both:
// seated then general in odd rounds, general then seated in even ones, so
// that neither always goes first), printing each play and, for both, the
// ratio of general to seated holds a second, play by play and in all.
func run(base string, nBuyers, nSeats, nHolds int, kind string, rounds int, cpuPIDs []int) error {
	kinds := []string{kind}
	if kind == "both" {
		kinds = []string{"seated", "general"}
	}
	l, err := prepare(base, nBuyers, nSeats, kinds)
	if err != nil {
		return err
	}
	l.cpuPIDs = cpuPIDs
	sum := map[string]float64{}
	sumCPU := map[string]time.Duration{}
	var ratios []float64
	for r := range rounds {
		order := slices.Clone(kinds)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		got := map[string]float64{}
		for _, k := range order {
			res, err := l.play(k, nHolds)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			got[k] = res.perSecond
			sum[k] += res.perSecond
			cpu := ""
			if len(cpuPIDs) > 0 {
				cpu = fmt.Sprintf(" cpu/hold %.3fms", float64(res.cpuPerHold)/float64(time.Millisecond))
				sumCPU[k] += res.cpuPerHold
			}
			fmt.Printf("%-7s holds/s %.0f placed %d refused %.1f%% limited %d seconds %.2f hold p50 %s p99 %s buyers %d seats %d%s\n",
				k, res.perSecond, res.placed, res.refusedShare, res.limited, res.seconds, res.p50, res.p99, nBuyers, nSeats, cpu)
		}
		if kind == "both" {
			ratios = append(ratios, got["general"]/got["seated"])
			fmt.Printf("round %d: general/seated %.2f\n", r+1, ratios[r])
		}
	}
	if kind == "both" {
		slices.Sort(ratios)
		fmt.Printf("all rounds: seated %.0f, general %.0f holds/s on average; general/seated %.2f (rounds %.2f to %.2f, median %.2f)\n",
			sum["seated"]/float64(rounds), sum["general"]/float64(rounds), sum["general"]/sum["seated"],
			ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
		if len(cpuPIDs) > 0 {
			fmt.Printf("cpu a hold: seated %.3fms, general %.3fms on average; seated/general %.2f\n",
				float64(sumCPU["seated"])/float64(rounds)/1e6, float64(sumCPU["general"])/float64(rounds)/1e6,
				float64(sumCPU["seated"])/float64(sumCPU["general"]))
		}
	}
	return nil
}
