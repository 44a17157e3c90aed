// Package protect is what the Redis protections have in common: the rate
// limits (internal/ratelimit), the concurrency limits (internal/concurrency),
// the fleet usage shedder (internal/shed) and the waiting room
// (internal/waitroom). It holds a protection's Name and Mode, the Outcome a
// decision is counted under, the Redis keys they build and how an identity is
// bounded in them, and the background loop that refreshes their state.
//
// It decides nothing itself and calls no Redis: each protection keeps its own
// scripts, options and metrics.
package protect

import "fmt"

// Name names a protection, such as "hold-buyer" or "fleet-usage": the limit
// label of its metrics, its name in the admin API and part of its keys. A
// program defines its names once, as constants, so that a misspelt name does
// not compile.
type Name string

// Mode is what a protection does with its decisions, changed at run time.
type Mode string

const (
	// Enforce refuses a request the protection decides against.
	Enforce Mode = "enforce"
	// Shadow decides as Enforce would but refuses nothing: a would-be refusal
	// is counted (shadow_denied, shadow_shed) and the request goes on.
	Shadow Mode = "shadow"
	// Off is the kill switch: the protection is not evaluated, Redis is not
	// called for it, and each request is counted off.
	Off Mode = "off"
)

// ParseMode reads "enforce", "shadow" or "off".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Enforce, Shadow, Off:
		return m, nil
	}
	return "", fmt.Errorf("mode %q is not enforce, shadow or off", s)
}

// CheckMode reports whether m is "" (which options read as Enforce) or a mode
// ParseMode reads.
func CheckMode(m Mode) error {
	if m == "" {
		return nil
	}
	_, err := ParseMode(string(m))
	return err
}

// Outcome is what a protection decided about one request: the decision label
// of its decisions counter. The outcomes below are common to the protections;
// a protection adds its own (ratelimit's fallback_allowed, shed's shed).
type Outcome string

const (
	// OutcomeAllowed: the protection let the request through.
	OutcomeAllowed Outcome = "allowed"
	// OutcomeDenied: an enforcing protection refused the request.
	OutcomeDenied Outcome = "denied"
	// OutcomeShadowDenied: a shadow protection would have refused; the
	// request goes on.
	OutcomeShadowDenied Outcome = "shadow_denied"
	// OutcomeFailOpen: Redis could not answer (an error, the deadline, or the
	// node's breaker open) and the protection let the request through.
	OutcomeFailOpen Outcome = "fail_open"
	// OutcomeOff: the protection is off and was not evaluated.
	OutcomeOff Outcome = "off"
)
