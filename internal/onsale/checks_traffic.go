package onsale

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// no5xx: every 5xx answer is a 503 of a type the contract documents as a
// 503 (kindOf). A 5xx without a problem (an edge's 502 or 504, a 500) fails it.
func no5xx(requests []request, names []string) Check {
	allowed := map[string]int{}
	bad := map[string]int{}
	for _, r := range requests {
		if r.status < 500 {
			continue
		}
		problem := names[r.problem]
		if r.kind == kindRefused {
			allowed[fmt.Sprintf("%d %s (%s)", r.status, problem, names[r.refused])]++
			continue
		}
		if problem == "" {
			problem = "no problem type"
		}
		bad[fmt.Sprintf("%d %s on %s", r.status, problem, names[r.route])]++
	}
	detail := "documented 503s: " + countList(allowed)
	if len(bad) > 0 {
		detail = "other 5xx: " + countList(bad) + "; " + detail
	}
	return Check{Name: checkNo5xx, Passed: len(bad) == 0, Detail: detail}
}

// countList writes counts as "a 3, b 1", largest first, or "none".
func countList(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// lotteryMinimum is the fewest early joiners the lottery check judges by.
const lotteryMinimum = 20

// LotteryStats is what the lottery check measured.
type LotteryStats struct {
	Early     int     `json:"early_joiners"`     // joined (answered) before on_sale_at, admitted, never re-joined
	Late      int     `json:"late_joiners"`      // every join sent after on_sale_at, admitted, never re-joined
	Rho       float64 `json:"spearman_rho"`      // between join order and admission order, early joiners
	Threshold float64 `json:"rho_threshold"`     // |rho| must stay below it
	LateFirst int     `json:"late_before_early"` // late joiners admitted before the last early joiner
}

// lotteryOf measures the admissions: Spearman's rank correlation ρ between the
// order in which the early joiners joined and the order in which they were
// admitted (1: first come, first served; −1: the reverse; about 0, within
// ±2/√(n−1), for a fair lottery), and how many late joiners were admitted
// before an early joiner (the room admits every early joiner first).
//
// A buyer joined early when her first successful join was answered before
// on_sale_at, late when every join of hers that the room may have carried out
// was sent after it (a join answered 503, or not at all, may have queued her:
// the room keeps that place when she joins again); a join that straddles the
// opening is neither. Buyers who had to join again (their place was lost) are
// left out: their second place is a late joiner's by design.
func lotteryOf(buyers []*buyerState, sale Sale) LotteryStats {
	var early []*buyerState
	var lastEarly time.Time
	for _, b := range buyers {
		if b.admittedAt.IsZero() || b.rejoined || b.joinSent.IsZero() {
			continue
		}
		if b.joinDone.Before(sale.OnSaleAt) {
			early = append(early, b)
			lastEarly = maxTime(lastEarly, b.admittedAt)
		}
	}
	st := LotteryStats{Early: len(early)}
	for _, b := range buyers {
		tried := b.joinTried
		if tried.IsZero() {
			tried = b.joinSent
		}
		if b.admittedAt.IsZero() || b.rejoined || b.joinSent.IsZero() || !tried.After(sale.OnSaleAt) {
			continue
		}
		st.Late++
		if b.admittedAt.Before(lastEarly) {
			st.LateFirst++
		}
	}
	joined := make([]float64, len(early))
	admitted := make([]float64, len(early))
	for i, b := range early {
		joined[i] = float64(b.joinDone.UnixNano())
		admitted[i] = float64(b.admittedAt.UnixNano())
	}
	st.Rho = spearman(joined, admitted)
	// Under a fair lottery ρ is about normal with a standard deviation of
	// 1/√(n−1): 4 of them is never reached by chance; first come, first served
	// (ρ ≈ 1) always is, from 20 early joiners on.
	st.Threshold = math.Max(0.5, 4/math.Sqrt(float64(max(len(early)-1, 1))))
	return st
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// lottery: the early joiners were admitted in a random order (|ρ| below the
// threshold), and all of them before any late joiner.
func lottery(buyers []*buyerState, sale Sale) Check {
	if !sale.HasRoom {
		return Check{Name: checkLottery, Passed: true, Skipped: true, Detail: "no waiting room"}
	}
	st := lotteryOf(buyers, sale)
	detail := fmt.Sprintf("%d early joiners: Spearman ρ(join order, admission order) = %.3f (|ρ| must be below %.2f; 1 is first come, first served); "+
		"%d late joiners, %d of them admitted before the last early joiner", st.Early, st.Rho, st.Threshold, st.Late, st.LateFirst)
	if st.Early < lotteryMinimum {
		return Check{Name: checkLottery, Passed: st.LateFirst == 0, Skipped: st.LateFirst == 0,
			Detail: detail + fmt.Sprintf("; too few early joiners to judge the order by (fewer than %d)", lotteryMinimum)}
	}
	return Check{Name: checkLottery, Passed: math.Abs(st.Rho) < st.Threshold && st.LateFirst == 0, Detail: detail}
}

// holdLimitHeld: no account placed more holds in any window of hold-buyer's
// period than the limit lets through: its burst (a full bucket at the
// window's start) plus its rate (what refills within it). Every client is
// counted, bots included, whichever instance served them. Each hold counts
// at the middle of its request.
//
// A hold "placed" is one that hold-buyer let through after deciding it: its
// answer is one the write gives (pastTheLimits) and its RateLimit-Policy
// names hold-buyer (the server
// writes the header of the tightest limit that decided a request, none for a
// limit that failed open while its Redis node was down). Holds answered
// without it (failed open, or another limit was tighter) are counted apart
// and not judged. Against a server that sends no RateLimit headers at all,
// every hold past the limits counts.
//
// The check is skipped when no account asked for more holds in a window
// than the limit allows: the limit was then never put to the test (with a
// waiting room, bots never reach it, and buyers try -max-hold-tries holds).
func holdLimitHeld(requests []request, names []string, l LimitSetting, buyers int) Check {
	if l.Mode != "enforce" {
		return Check{Name: checkHoldLimit, Passed: true, Skipped: true, Detail: fmt.Sprintf("hold-buyer is %s, not enforced", l)}
	}
	headers := false
	for _, r := range requests {
		if names[r.route] == routeHold && names[r.policy] != "" {
			headers = true
			break
		}
	}
	placed := map[int32][]time.Duration{}
	asked := map[int32][]time.Duration{}
	undecided := 0
	for _, r := range requests {
		if names[r.route] != routeHold || r.client < 0 {
			continue
		}
		at := r.start + r.latency/2
		refusedHere := r.status == 429 && names[r.refused] == limitHoldBuyer
		past := pastTheLimits(r, names)
		switch {
		case refusedHere:
			asked[r.client] = append(asked[r.client], at)
		case past && (!headers || names[r.policy] == limitHoldBuyer):
			placed[r.client] = append(placed[r.client], at)
			asked[r.client] = append(asked[r.client], at)
		case past:
			undecided++
		}
	}
	allowed := l.Burst + l.Rate
	worst, worstClient, over := 0, int32(-1), 0
	for c, times := range placed {
		n := maxInWindow(times, l.Period())
		if n > worst || n == worst && c < worstClient {
			worst, worstClient = n, c
		}
		if n > allowed {
			over++
		}
	}
	mostAsked, tested := 0, 0
	for _, times := range asked {
		n := maxInWindow(times, l.Period())
		mostAsked = max(mostAsked, n)
		if n > allowed {
			tested++
		}
	}
	who := ""
	if worstClient >= 0 {
		who = fmt.Sprintf(" (%s %d)", clientKind(worstClient, buyers), clientIndex(worstClient, buyers))
	}
	detail := fmt.Sprintf("hold-buyer %s allows %d holds in any %s; the most one account placed: %d%s; accounts over: %d of %d that placed holds; "+
		"%d accounts asked for more than it allows (the most: %d)",
		l, allowed, period(l.Period()), worst, who, over, len(placed), tested, mostAsked)
	if headers {
		detail += fmt.Sprintf("; %d holds were let through without hold-buyer's decision (failed open, or another limit was tighter), not judged", undecided)
	} else {
		detail += "; the answers carry no RateLimit-Policy: every 201 and 409 counted as placed"
	}
	if over == 0 && tested == 0 {
		return Check{Name: checkHoldLimit, Passed: true, Skipped: true,
			Detail: detail + "; no account asked for more than the limit allows, so it was never put to the test"}
	}
	return Check{Name: checkHoldLimit, Passed: over == 0, Detail: detail}
}

// maxInWindow is the most of times within any half-open window of length w.
func maxInWindow(times []time.Duration, w time.Duration) int {
	slices.Sort(times)
	most, lo := 0, 0
	for hi, t := range times {
		for t-times[lo] >= w {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// clientKind and clientIndex name a client: buyer 1, bot 3 (from 1).
func clientKind(c int32, buyers int) string {
	if int(c) < buyers {
		return "buyer"
	}
	return "bot"
}

func clientIndex(c int32, buyers int) int {
	if int(c) < buyers {
		return int(c) + 1
	}
	return int(c) - buyers + 1
}

// pastTheLimits says whether a hold's answer comes from the write that
// follows the limits' decision: a 201, or a 409 seats-unavailable or
// too-many-seats-held. (A 409 not-on-sale comes before the waiting room and
// the limits, a 403 not-admitted before the limits.)
func pastTheLimits(r request, names []string) bool {
	switch {
	case r.status == 201:
		return true
	case r.status == 409:
		p := names[r.problem]
		return p == "seats-unavailable" || p == "too-many-seats-held"
	}
	return false
}
