package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// stagedoorAlgorithm is Stagedoor's own limiter (internal/ratelimit): GCRA in
// one Lua script on Redis's clock, a bucket of l.N tokens refilled at l.N per
// window, its state one integer a key, with the limiter's denial cache in front.
var stagedoorAlgorithm = Algorithm{ID: "stagedoor", Name: "Stagedoor (GCRA)", Origin: "Stagedoor", New: newStagedoor}

// stagedoorLimit is the name of the one limit the lab defines.
const stagedoorLimit ratelimit.Name = "lab"

// stagedoor adapts a ratelimit.Limiter to Limiter.
type stagedoor struct{ lim *ratelimit.Limiter }

func newStagedoor(rdb redis.UniversalClient, prefix string, l Limit) (Limiter, error) {
	opts := ratelimit.Options{
		Prefix: prefix,
		// The lab loads the machine on purpose: a slow answer is still an answer.
		Timeout: 2 * time.Second,
		Limits: []ratelimit.Definition{{
			Name:    stagedoorLimit,
			Setting: ratelimit.Setting{Limit: ratelimit.Limit{Rate: l.N, Period: l.Window, Burst: l.N}, Mode: ratelimit.Enforce},
			Policy:  ratelimit.FailOpen,
		}},
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &stagedoor{lim: ratelimit.New(rdb, opts)}, nil
}

func (s *stagedoor) Allow(ctx context.Context, key string) (bool, error) {
	allowed, _, err := s.decide(ctx, key)
	return allowed, err
}

// decide also says whether a refusal came from the denial cache, without Redis.
func (s *stagedoor) decide(ctx context.Context, key string) (allowed, cached bool, err error) {
	d := s.lim.Allow(ctx, ratelimit.Check{Limit: stagedoorLimit, Key: key})
	r := d.Results[0]
	if r.Outcome == ratelimit.OutcomeFailOpen {
		// The limiter allowed because Redis did not answer: no decision of Redis's.
		if err := ctx.Err(); err != nil {
			return false, false, err
		}
		return false, false, errors.New("lab: Stagedoor's limiter failed open (Redis did not answer in time)")
	}
	if r.Outcome != ratelimit.OutcomeAllowed && r.Outcome != ratelimit.OutcomeDenied {
		return false, false, fmt.Errorf("lab: Stagedoor's limiter decided %s", r.Outcome)
	}
	return d.Allowed, r.Cached, nil
}

// cachedDecider is a Limiter that says which refusals it made without Redis.
type cachedDecider interface {
	decide(ctx context.Context, key string) (allowed, cached bool, err error)
}
