package limitadmin

import (
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// Kind is what a named protection is (limits.Bucket, limits.Lease or
// limits.Shedder): the registry's kind, which GET /v1/admin/limits shows.
type Kind = limits.Kind

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
	Kind Kind // limits.Lease or limits.Shedder
	Of   Moder
	// MaxInFlight is a concurrency limit's maximum, shown by List; 0 for a shedder.
	MaxInFlight int
}

// switchSetting is how a switch's stored mode travels with the buckets'
// settings: a Setting with no Limit.
func switchSetting(m ratelimit.Mode) ratelimit.Setting { return ratelimit.Setting{Mode: m} }
