package testenv

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// CommandCounter is a Redis hook (client.AddHook) that counts the commands
// the client sends whose name is in Names (as go-redis names them: "ping",
// "evalsha"; every command when Names is empty), pipelined ones one by one,
// and the most of them under way at once.
type CommandCounter struct {
	Names           []string
	sent, now, most atomic.Int64
}

// Sent is how many of the commands have been sent.
func (c *CommandCounter) Sent() int64 { return c.sent.Load() }

// Most is the most of the commands that were under way at once.
func (c *CommandCounter) Most() int64 { return c.most.Load() }

func (c *CommandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *CommandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		defer c.begin(c.counted([]redis.Cmder{cmd}))()
		return next(ctx, cmd)
	}
}

func (c *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		defer c.begin(c.counted(cmds))()
		return next(ctx, cmds)
	}
}

// counted is how many of cmds are counted.
func (c *CommandCounter) counted(cmds []redis.Cmder) int64 {
	var n int64
	for _, cmd := range cmds {
		if len(c.Names) == 0 || slices.Contains(c.Names, cmd.Name()) {
			n++
		}
	}
	return n
}

// begin counts n commands sent and under way, and returns what ends them.
func (c *CommandCounter) begin(n int64) (end func()) {
	if n == 0 {
		return func() {}
	}
	c.sent.Add(n)
	now := c.now.Add(n)
	for m := c.most.Load(); now > m && !c.most.CompareAndSwap(m, now); m = c.most.Load() {
	}
	return func() { c.now.Add(-n) }
}
