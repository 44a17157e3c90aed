package limitadmin

import "github.com/stagedoor/stagedoor/internal/ratelimit"

// Kind is what a named protection is. GET /v1/admin/limits shows it.
type Kind string

const (
	// Bucket is a token bucket of the Limiter: rate, period, burst and mode.
	Bucket Kind = "bucket"
	// Concurrency is a limit on requests in flight at once, such as
	// buyer-concurrency: an admin sets its mode; its maximum comes from the
	// environment.
	Concurrency Kind = "concurrency"
	// Shedder is a load shedder, such as fleet-usage: an admin sets its mode.
	Shedder Kind = "shedder"
)

// Moder is a protection whose mode is read and set at run time; the
// concurrency limits and the shedders are.
type Moder interface {
	Name() ratelimit.Name
	Mode() ratelimit.Mode
	SetMode(ratelimit.Mode)
}

// Switch is a protection that is not a token bucket: of it only the mode is
// stored, set by an admin and applied on every instance, as a bucket's
// setting is.
type Switch struct {
	Kind Kind // Concurrency or Shedder
	Of   Moder
	// MaxInFlight is a concurrency limit's maximum, shown by List; 0 for a shedder.
	MaxInFlight int
}

// switchSetting is how a switch's stored mode travels with the buckets'
// settings: a Setting with no Limit.
func switchSetting(m ratelimit.Mode) ratelimit.Setting { return ratelimit.Setting{Mode: m} }
