package ratelimit

import (
	"slices"
	"time"

	"github.com/stagedoor/stagedoor/internal/protect"
)

// Name names a limit, such as "hold-buyer" (protect.Name, the name of every
// protection). A program defines its names once, as constants, so that a
// misspelt name does not compile.
type Name = protect.Name

// Check names one bucket a request must pass: the limit, and the identity it is
// keyed on, such as {Limit: "hold-buyer", Key: "8812"}.
type Check struct {
	Limit Name
	Key   string
}

// Outcome is what one limit decided about one request (protect.Outcome, with
// the outcomes of the fallback and Skipped besides the protections' own). It
// is also the decision label of stagedoor_ratelimit_decisions_total.
type Outcome = protect.Outcome

const (
	// OutcomeAllowed: the bucket in Redis had a token. The token was spent unless
	// another limit of the same request refused (Decision.Allowed false).
	OutcomeAllowed = protect.OutcomeAllowed
	// OutcomeDenied: an enforcing limit refused, in Redis or from the denial cache.
	OutcomeDenied = protect.OutcomeDenied
	// OutcomeShadowDenied: a shadow limit would have refused; the request goes on.
	OutcomeShadowDenied = protect.OutcomeShadowDenied
	// OutcomeFailOpen: Redis could not answer and the limit's policy allowed.
	OutcomeFailOpen = protect.OutcomeFailOpen
	// OutcomeFallbackAllowed: Redis could not answer; the in-process bucket allowed.
	OutcomeFallbackAllowed Outcome = "fallback_allowed"
	// OutcomeFallbackDenied: Redis could not answer; the in-process bucket refused.
	OutcomeFallbackDenied Outcome = "fallback_denied"
	// OutcomeOff: the limit is off and was not evaluated.
	OutcomeOff = protect.OutcomeOff
	// OutcomeSkipped: the limit was not consulted because another limit of the
	// request had already refused it (a cached denial, or an earlier hash slot on a
	// cluster). It is not counted in the metrics and refuses nothing.
	OutcomeSkipped Outcome = "skipped"
)

// outcomes are the counted outcomes, in the order of limitState.counts.
var outcomes = [...]Outcome{OutcomeAllowed, OutcomeDenied, OutcomeShadowDenied,
	OutcomeFailOpen, OutcomeFallbackAllowed, OutcomeFallbackDenied, OutcomeOff}

// outcomeIndex is o's place in outcomes, or -1 for an outcome not counted.
func outcomeIndex(o Outcome) int { return slices.Index(outcomes[:], o) }

// Result is one limit's part of a Decision. The examples are for hold-buyer,
// "10/1m" (10 tokens, one more every 6 s).
type Result struct {
	// Limit is the limit's name, such as "hold-buyer".
	Limit Name
	// Key is the identity the bucket is keyed on, such as "8812".
	Key string
	// Setting is the limit's setting when the request was decided, such as 10/1m
	// enforce.
	Setting Setting
	// Outcome is what the limit decided, such as OutcomeAllowed.
	Outcome Outcome
	// Allowed is false when this limit refused the request (OutcomeDenied or
	// OutcomeFallbackDenied) and true for every other outcome. A buyer's 11th hold
	// within a second: false.
	Allowed bool
	// Remaining is the whole tokens left in the bucket after the decision, never
	// negative. A buyer's 3rd hold in a fresh minute: 7. When another limit refused
	// the request no token was spent, and Remaining counts the token not taken.
	Remaining int
	// ResetAfter is the time until the bucket is full again. A buyer's 3rd hold at
	// once: 18s (3 tokens, one every 6 s). Zero when the bucket is full.
	ResetAfter time.Duration
	// RetryAfter is the exact wait until this limit would allow the request, 0 when
	// it allowed. A buyer's 11th hold at once: 6s; asked again 2 s later: 4s. For
	// OutcomeShadowDenied it is the wait the limit would have imposed.
	RetryAfter time.Duration
	// Cached is true when the refusal came from this instance's denial cache,
	// without a call to Redis.
	Cached bool
}

// Decision is the verdict on one request against all of its limits.
type Decision struct {
	// Allowed is true when no limit refused. A refused request spent no token of
	// any of its limits.
	Allowed bool
	// RetryAfter is the exact wait until every refusing limit would allow the
	// request, the longest of their RetryAfter; 0 when allowed. A buyer refused
	// by hold-buyer for 6s and by hold-organizer for 5ms: 6s.
	RetryAfter time.Duration
	// Results has one Result a Check, in the order of the checks.
	Results []Result
}

// Violated returns the names of the limits that refused the request, in the order
// of the checks; none when it was allowed.
func (d Decision) Violated() []Name {
	var names []Name
	for _, r := range d.Results {
		if !r.Allowed {
			names = append(names, r.Limit)
		}
	}
	return names
}

// Tightest returns the result to show in the rate-limit headers: among the
// limits that applied (enforced, by Redis or by the fallback: not shadow, off,
// fail_open or skipped), the refusing one with the longest RetryAfter or, when
// none refused, the one with the fewest Remaining (the longest ResetAfter on a
// tie). ok is false when no limit applied.
//
// hold-buyer with 7 left and hold-organizer with 150 left: hold-buyer.
func (d Decision) Tightest() (r Result, ok bool) {
	for _, c := range d.Results {
		switch c.Outcome {
		case OutcomeAllowed, OutcomeDenied, OutcomeFallbackAllowed, OutcomeFallbackDenied:
		default:
			continue
		}
		if c.Setting.Mode == Shadow {
			continue
		}
		if !ok || tighter(c, r) {
			r, ok = c, true
		}
	}
	return r, ok
}

// tighter reports whether a should be shown rather than b.
func tighter(a, b Result) bool {
	switch {
	case a.Allowed != b.Allowed:
		return !a.Allowed
	case !a.Allowed:
		return a.RetryAfter > b.RetryAfter
	case a.Remaining != b.Remaining:
		return a.Remaining < b.Remaining
	default:
		return a.ResetAfter > b.ResetAfter
	}
}

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
