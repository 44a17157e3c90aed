// Package limits is the one place where Stagedoor's rate limits are defined:
// each limit's name, the environment variable that sets it at start, its
// default, and what it does while Redis cannot answer. Code names a limit by
// its constant here, never by a string, so a typo does not compile; a test in
// internal/httpapi checks that every limit is decided somewhere and nothing
// else is.
package limits

import "github.com/stagedoor/stagedoor/internal/ratelimit"

// The limits of the HTTP contract.
const (
	LoginAddress  ratelimit.Name = "login-address"  // client address, before any password hash
	LoginEmail    ratelimit.Name = "login-email"    // normalized email of a login, before any hash
	LoginDevice   ratelimit.Name = "login-device"   // a known device's logins, instead of the two above
	SignupAddress ratelimit.Name = "signup-address" // client address, on creating an account, before any hash
	HoldBuyer     ratelimit.Name = "hold-buyer"     // buyer id, on placing a hold
	HoldOrganizer ratelimit.Name = "hold-organizer" // the event's organizer, on placing a hold
	EventCreate   ratelimit.Name = "event-create"   // organizer id, on creating an event
	ScannerKey    ratelimit.Name = "scanner-key"    // scanner key id, on a scan
	QueueJoin     ratelimit.Name = "queue-join"     // buyer and event, on joining a waiting room
	CheckoutBuyer ratelimit.Name = "checkout-buyer" // buyer id, on a payment attempt (card testing)
	CheckoutHold  ratelimit.Name = "checkout-hold"  // buyer and hold, on a payment attempt: a cap per hold
)

// Definition is one limit: its name, the variable that sets it at start, that
// variable's default, and its policy while Redis is unreachable.
type Definition struct {
	Name     ratelimit.Name
	Variable string
	Default  string
	Policy   ratelimit.Policy
}

// All lists every limit, in the order of the contract's table. The limits in
// front of bcrypt (logins, signups) protect its CPU, and those in front of
// Payrail (payment attempts) stop card testing, so they fall back to
// in-process buckets; the others protect fairness and fail open.
var All = []Definition{
	{LoginAddress, "STAGEDOOR_LIMIT_LOGIN_ADDRESS", "10/1m", ratelimit.Fallback},
	{LoginEmail, "STAGEDOOR_LIMIT_LOGIN_EMAIL", "20/1h", ratelimit.Fallback},
	{HoldBuyer, "STAGEDOOR_LIMIT_HOLD_BUYER", "10/1m", ratelimit.FailOpen},
	{HoldOrganizer, "STAGEDOOR_LIMIT_HOLD_ORGANIZER", "200/1s", ratelimit.FailOpen | ratelimit.Leased},
	{ScannerKey, "STAGEDOOR_LIMIT_SCANNER_KEY", "20/1s burst 50", ratelimit.FailOpen},
	{QueueJoin, "STAGEDOOR_LIMIT_QUEUE_JOIN", "5/1m", ratelimit.FailOpen},
	{SignupAddress, "STAGEDOOR_LIMIT_SIGNUP_ADDRESS", "5/1h burst 5", ratelimit.Fallback},
	{EventCreate, "STAGEDOOR_LIMIT_EVENT_CREATE", "30/1h", ratelimit.FailOpen},
	{LoginDevice, "STAGEDOOR_LIMIT_LOGIN_DEVICE", "10/1h", ratelimit.Fallback},
	{CheckoutBuyer, "STAGEDOOR_LIMIT_CHECKOUT_BUYER", "5/10m burst 5", ratelimit.Fallback},
	{CheckoutHold, "STAGEDOOR_LIMIT_CHECKOUT_HOLD", "3/1h burst 3", ratelimit.Fallback},
}
