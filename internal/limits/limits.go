// Package limits is the registry of Stagedoor's protections: every rate limit
// (a token bucket), lease on requests in flight, load shedder, bound and
// admission is declared here once, in All, with its name, kind, what it is
// keyed on, the ring that decides it, the variable that sets it and that
// variable's default, what it does while Redis cannot answer, and the mode it
// starts in. It keeps the name limits, as every caller names a protection
// limits.X, but it is a registry: it decides nothing.
//
// The others read it: internal/config reads each variable, internal/app builds
// the limiter's definitions and the admin API's switches from it,
// internal/limitadmin shows each protection's Kind, internal/httpapi's
// routes.go names on each route's row every protection the route passes, in
// order (a test there fails when a handler decides one its row does not name),
// and derives from the rows which routes the in-flight bound does not count.
//
// Adding a limit is one Protection in All plus its entry in the contract
// (docs/openapi.yaml): see docs/development.md, "Adding a limit".
package limits

import (
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/shed"
)

// The protections' names: first the token buckets of the HTTP contract.
const (
	LoginAddress  ratelimit.Name = "login-address"
	LoginEmail    ratelimit.Name = "login-email"
	LoginDevice   ratelimit.Name = "login-device"
	SignupAddress ratelimit.Name = "signup-address"
	HoldBuyer     ratelimit.Name = "hold-buyer"
	HoldOrganizer ratelimit.Name = "hold-organizer"
	EventCreate   ratelimit.Name = "event-create"
	ScannerKey    ratelimit.Name = "scanner-key"
	QueueJoin     ratelimit.Name = "queue-join"
	CheckoutBuyer ratelimit.Name = "checkout-buyer"
	CheckoutHold  ratelimit.Name = "checkout-hold"
	TransferBuyer ratelimit.Name = "transfer-buyer"

	// The protections beside the token buckets. The leases and the shedders
	// are named as limits are, so that the admin API sets their modes under
	// these names (PUT /v1/admin/limits/{name}); a bound's name is the "bound"
	// member of its 503 service-overloaded.
	BuyerConcurrency     ratelimit.Name = "buyer-concurrency"
	OrganizerConcurrency ratelimit.Name = "organizer-concurrency"
	FleetUsage                          = shed.FleetUsage
	WorkerUtilization                   = shed.WorkerUtilization
	InFlight             ratelimit.Name = "in_flight"
	Streams              ratelimit.Name = "stream"
	CheckoutSlots        ratelimit.Name = "checkout"
	Connections          ratelimit.Name = "connections"
	RoomAdmission        ratelimit.Name = "room-admission"
	PaymentBreaker       ratelimit.Name = "payment-breaker"
)

// Kind is what a protection is. GET /v1/admin/limits shows the kind of those
// an admin switches.
type Kind string

const (
	// Bucket is a token bucket of internal/ratelimit: rate, period, burst and
	// mode, set at run time by the admin API; 429 rate-limited.
	Bucket Kind = "bucket"
	// Lease counts requests in flight at once across instances
	// (internal/concurrency): an admin sets its mode, the environment its
	// maximum; 429 too-many-concurrent-requests.
	Lease Kind = "concurrency"
	// Shedder is a load shedder of internal/shed, asked by the route's class:
	// an admin sets its mode; 503 service-overloaded.
	Shedder Kind = "shedder"
	// Bound is a fixed bound of one instance, refused at once with 503
	// service-overloaded and Retry-After, never a queue.
	Bound Kind = "bound"
	// Admission is a rule a request must have passed before: the waiting
	// room's admission (403 not-admitted), the payment breaker (503).
	Admission Kind = "admission"
)

// Key is the identity a protection is keyed on: what one bucket, one count or
// one bound is of. internal/httpapi's keys.go turns a request into each.
type Key string

const (
	ByAddress        Key = "client address" // behind trusted proxies, the address they saw
	ByEmail          Key = "email"          // the normalized email a login names
	ByDevice         Key = "device"         // a known device of the login's account
	ByBuyer          Key = "buyer"          // the authenticated buyer
	ByOrganizer      Key = "organizer"      // the authenticated organizer
	ByAccount        Key = "account"        // the authenticated buyer or organizer
	ByEventOrganizer Key = "event organizer"
	ByScannerKey     Key = "scanner key" // a door device's key id (a venue's phones share one address)
	ByBuyerAndEvent  Key = "buyer and event"
	ByBuyerAndHold   Key = "buyer and hold"
	ByInstance       Key = "instance" // one count of this instance
	ByFleet          Key = "fleet"    // one count of every instance
)

// Ring is where a protection is decided.
type Ring int

const (
	// Listener: before any request is read, on accepting a connection.
	Listener Ring = iota + 1
	// Outer: the rings every route passes (routes.go's e.Use), by its class.
	Outer
	// Route: a ring on the route's row, before its handler.
	Route
	// Handler: named on the route's row, decided by its handler once the
	// body names the key.
	Handler
)

// RedisDown is what a protection does while Redis cannot answer (an error,
// the deadline, or its node's breaker open).
type RedisDown string

const (
	NoRedis    RedisDown = "no Redis"    // it never asks Redis
	FailOpen   RedisDown = "fail open"   // allows, and counts it: fairness
	Fallback   RedisDown = "fallback"    // an in-process bucket of the same limit on each instance: capacity, card testing
	FailClosed RedisDown = "fail closed" // refuses with 503: the waiting room
)

// Protection is one limit, bound or shedder, declared once.
type Protection struct {
	Name ratelimit.Name
	Kind Kind
	Key  Key
	Ring Ring
	// Variable sets it at start, Default when unset: a limit such as
	// "10/1m" for a Bucket, a number or a mode for the others.
	Variable, Default string
	RedisDown         RedisDown
	// Leased: a Bucket whose tokens each instance takes from Redis a small
	// batch at a time (ratelimit.Leased), for a hot key.
	Leased bool
	// Tag is the hash tag of its Redis keys, when others decided in one
	// script with it must share its slot (BuyerTag).
	Tag string
	// Mode is the mode it starts in, which an admin may switch at run time
	// (enforce, shadow, off); "" for those without a mode.
	Mode ratelimit.Mode
}

// BuyerTag is the hash tag of a buyer's keys that one script decides
// together: hold-buyer's bucket and her leases in flight (buyer-concurrency)
// carry {buyer:<id>}, so that they share a Redis Cluster slot and a hold's
// limits and lease are one round trip (internal/ratelimit's Rider).
const BuyerTag = "buyer"

// All is every protection: the buckets in the order of the contract's table,
// then the leases and the shedders in the admin API's order, then the bounds
// and admissions. The buckets in front of bcrypt (logins, signups) protect its
// CPU, and those in front of Payrail (payment attempts) stop card testing, so
// they fall back to in-process buckets; the others protect fairness and fail
// open.
var All = []Protection{
	{Name: LoginAddress, Kind: Bucket, Key: ByAddress, Ring: Handler, Variable: "STAGEDOOR_LIMIT_LOGIN_ADDRESS", Default: "10/1m", RedisDown: Fallback, Mode: ratelimit.Enforce},
	{Name: LoginEmail, Kind: Bucket, Key: ByEmail, Ring: Handler, Variable: "STAGEDOOR_LIMIT_LOGIN_EMAIL", Default: "20/1h", RedisDown: Fallback, Mode: ratelimit.Enforce},
	{Name: HoldBuyer, Kind: Bucket, Key: ByBuyer, Ring: Handler, Variable: "STAGEDOOR_LIMIT_HOLD_BUYER", Default: "10/1m", RedisDown: FailOpen, Tag: BuyerTag, Mode: ratelimit.Enforce},
	{Name: HoldOrganizer, Kind: Bucket, Key: ByEventOrganizer, Ring: Handler, Variable: "STAGEDOOR_LIMIT_HOLD_ORGANIZER", Default: "200/1s", RedisDown: FailOpen, Leased: true, Mode: ratelimit.Enforce},
	{Name: ScannerKey, Kind: Bucket, Key: ByScannerKey, Ring: Route, Variable: "STAGEDOOR_LIMIT_SCANNER_KEY", Default: "20/1s burst 50", RedisDown: FailOpen, Mode: ratelimit.Enforce},
	{Name: QueueJoin, Kind: Bucket, Key: ByBuyerAndEvent, Ring: Route, Variable: "STAGEDOOR_LIMIT_QUEUE_JOIN", Default: "5/1m", RedisDown: FailOpen, Mode: ratelimit.Enforce},
	{Name: SignupAddress, Kind: Bucket, Key: ByAddress, Ring: Route, Variable: "STAGEDOOR_LIMIT_SIGNUP_ADDRESS", Default: "5/1h burst 5", RedisDown: Fallback, Mode: ratelimit.Enforce},
	{Name: EventCreate, Kind: Bucket, Key: ByOrganizer, Ring: Route, Variable: "STAGEDOOR_LIMIT_EVENT_CREATE", Default: "30/1h", RedisDown: FailOpen, Mode: ratelimit.Enforce},
	{Name: LoginDevice, Kind: Bucket, Key: ByDevice, Ring: Handler, Variable: "STAGEDOOR_LIMIT_LOGIN_DEVICE", Default: "10/1h", RedisDown: Fallback, Mode: ratelimit.Enforce},
	{Name: CheckoutBuyer, Kind: Bucket, Key: ByBuyer, Ring: Handler, Variable: "STAGEDOOR_LIMIT_CHECKOUT_BUYER", Default: "5/10m burst 5", RedisDown: Fallback, Mode: ratelimit.Enforce},
	{Name: CheckoutHold, Kind: Bucket, Key: ByBuyerAndHold, Ring: Handler, Variable: "STAGEDOOR_LIMIT_CHECKOUT_HOLD", Default: "3/1h burst 3", RedisDown: Fallback, Mode: ratelimit.Enforce},
	// transfer-buyer: ticket transfers a buyer asks for, each spending a
	// token whatever its answer, so that trying emails is slow too.
	{Name: TransferBuyer, Kind: Bucket, Key: ByBuyer, Ring: Route, Variable: "STAGEDOOR_LIMIT_TRANSFER_BUYER", Default: "10/1h burst 10", RedisDown: FailOpen, Mode: ratelimit.Enforce},

	{Name: BuyerConcurrency, Kind: Lease, Key: ByBuyer, Ring: Route, Variable: "STAGEDOOR_LIMIT_BUYER_CONCURRENCY", Default: "5", RedisDown: FailOpen, Tag: BuyerTag, Mode: ratelimit.Enforce},
	{Name: OrganizerConcurrency, Kind: Lease, Key: ByOrganizer, Ring: Route, Variable: "STAGEDOOR_LIMIT_ORGANIZER_CONCURRENCY", Default: "20", RedisDown: FailOpen, Mode: ratelimit.Enforce},
	// fleet-usage keeps a share of the fleet's capacity (and
	// STAGEDOOR_FLEET_RESERVE of it for critical requests); off while its
	// capacity is 0.
	{Name: FleetUsage, Kind: Shedder, Key: ByFleet, Ring: Outer, Variable: "STAGEDOOR_FLEET_CAPACITY", Default: "0", RedisDown: FailOpen, Mode: ratelimit.Enforce},
	// worker-utilization sheds the lowest class first when this instance is
	// saturated; its variable is its mode at the first start.
	{Name: WorkerUtilization, Kind: Shedder, Key: ByInstance, Ring: Outer, Variable: "STAGEDOOR_WORKER_UTILIZATION", Default: "enforce", RedisDown: NoRedis, Mode: ratelimit.Enforce},

	{Name: Connections, Kind: Bound, Key: ByInstance, Ring: Listener, Variable: "STAGEDOOR_MAX_CONNECTIONS", Default: "10000", RedisDown: NoRedis},
	{Name: InFlight, Kind: Bound, Key: ByInstance, Ring: Outer, Variable: "STAGEDOOR_MAX_IN_FLIGHT", Default: "400", RedisDown: NoRedis},
	{Name: Streams, Kind: Bound, Key: ByInstance, Ring: Handler, Variable: "STAGEDOOR_MAX_STREAMS", Default: "5000", RedisDown: NoRedis},
	{Name: CheckoutSlots, Kind: Bound, Key: ByInstance, Ring: Handler, Variable: "STAGEDOOR_CHECKOUT_SLOTS", Default: "20", RedisDown: NoRedis},
	{Name: RoomAdmission, Kind: Admission, Key: ByBuyerAndEvent, Ring: Handler, RedisDown: FailClosed},
	{Name: PaymentBreaker, Kind: Admission, Key: ByInstance, Ring: Handler, Variable: "STAGEDOOR_PAYMENT_BREAKER_BUYERS", Default: "20", RedisDown: NoRedis},
}

// Of returns the protection named name; it panics on a name not in All, which
// only a constant of this package can be.
func Of(name ratelimit.Name) Protection {
	for _, p := range All {
		if p.Name == name {
			return p
		}
	}
	panic("limits: no protection " + string(name))
}

// OfKind returns the protections of kind, in the order of All.
func OfKind(kind Kind) []Protection {
	var out []Protection
	for _, p := range All {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

// Policy is a Bucket's policy for the limiter (ratelimit.Definition.Policy).
func (p Protection) Policy() ratelimit.Policy {
	policy := ratelimit.FailOpen
	if p.RedisDown == Fallback {
		policy = ratelimit.Fallback
	}
	if p.Leased {
		policy |= ratelimit.Leased
	}
	return policy
}
