package testenv

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// ScriptCalls passes every call to a real client and counts the script calls
// (EVAL, EVALSHA, their read-only forms, SCRIPT EXISTS and SCRIPT LOAD), so
// that a test can tell whether a decision reached the network. It answers
// nothing itself; the other commands pass through uncounted, and so do the
// commands of a pipeline made from it.
type ScriptCalls struct {
	redis.UniversalClient
	calls atomic.Int64
}

// CountScripts wraps c in a ScriptCalls.
func CountScripts(c redis.UniversalClient) *ScriptCalls {
	return &ScriptCalls{UniversalClient: c}
}

// Calls is how many script calls have been sent.
func (c *ScriptCalls) Calls() int64 { return c.calls.Load() }

func (c *ScriptCalls) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	c.calls.Add(1)
	return c.UniversalClient.Eval(ctx, script, keys, args...)
}

func (c *ScriptCalls) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	c.calls.Add(1)
	return c.UniversalClient.EvalSha(ctx, sha, keys, args...)
}

func (c *ScriptCalls) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	c.calls.Add(1)
	return c.UniversalClient.EvalRO(ctx, script, keys, args...)
}

func (c *ScriptCalls) EvalShaRO(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	c.calls.Add(1)
	return c.UniversalClient.EvalShaRO(ctx, sha, keys, args...)
}

func (c *ScriptCalls) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	c.calls.Add(1)
	return c.UniversalClient.ScriptExists(ctx, hashes...)
}

func (c *ScriptCalls) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	c.calls.Add(1)
	return c.UniversalClient.ScriptLoad(ctx, script)
}
