// Package tally logs events that can come by the thousand a second, such as
// the server's refusals, as a few lines with counts: the first of a kind at
// once, then, while more come, one line an interval with how many came since
// the last line. When an interval passes without one, the kind goes quiet,
// and its next event is a first again.
//
// Counting costs an atomic add and a load (a map lookup of the kind on top,
// with Count): a flood of refusals must cost next to nothing, its log
// included. The lines are written by a timer that runs only while a kind is
// busy.
package tally

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultEvery is how often a busy kind is logged again.
const DefaultEvery = 10 * time.Second

// Options are a Tally's settings; the zero value is the defaults.
type Options struct {
	// Every is the interval between a busy kind's lines; zero: DefaultEvery.
	Every time.Duration
	// AfterFunc runs f after d, as time.AfterFunc does (the default); tests
	// give their own, to run the interval's end when they choose.
	AfterFunc func(d time.Duration, f func())
}

// Tally logs counts of kinds of events with one message.
type Tally struct {
	logger *slog.Logger
	msg    string
	opts   Options
	kinds  sync.Map // name → *Kind, for Count
}

// New returns a Tally that logs msg to logger.
func New(logger *slog.Logger, msg string, opts Options) *Tally {
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	if opts.AfterFunc == nil {
		opts.AfterFunc = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	return &Tally{logger: logger, msg: msg, opts: opts}
}

// Kind is one kind of event, logged at its level with its attributes.
type Kind struct {
	t      *Tally
	level  slog.Level
	attrs  []slog.Attr
	count  atomic.Int64 // events since the last line
	total  atomic.Int64 // events since the kind became busy
	busy   atomic.Bool  // a line was written and the interval's timer runs
	mu     sync.Mutex   // one line at a time, in order
	since  time.Time    // when the kind became busy; under mu
	lastAt time.Time    // the last line's; under mu
}

// Kind returns the kind of name, made the first time with level and attrs
// (name is the tally's key only: put it in attrs to have it logged).
func (t *Tally) Kind(name string, level slog.Level, attrs ...slog.Attr) *Kind {
	if k, ok := t.kinds.Load(name); ok {
		return k.(*Kind)
	}
	k, _ := t.kinds.LoadOrStore(name, &Kind{t: t, level: level, attrs: attrs})
	return k.(*Kind)
}

// Count counts one event of the kind whose lines say key=value, at level
// (the level of the kind's first event). It allocates nothing once the kind
// exists.
func (t *Tally) Count(key, value string, level slog.Level) {
	if k, ok := t.kinds.Load(value); ok {
		k.(*Kind).Add()
		return
	}
	t.Kind(value, level, slog.String(key, value)).Add()
}

// Add counts one event. The first of a quiet kind is logged at once.
func (k *Kind) Add() {
	k.count.Add(1)
	if k.busy.Load() || !k.busy.CompareAndSwap(false, true) {
		return
	}
	now := time.Now()
	k.mu.Lock()
	k.since = now
	k.total.Store(0)
	k.log(now, true)
	k.mu.Unlock()
	k.t.opts.AfterFunc(k.t.opts.Every, k.tick)
}

// tick ends an interval: its count is logged, or the kind goes quiet.
func (k *Kind) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.count.Load() == 0 {
		k.busy.Store(false)
		// An event that came between the load and the store saw the kind
		// busy and was not logged: it is a first again.
		if k.count.Load() == 0 || !k.busy.CompareAndSwap(false, true) {
			return
		}
		k.since = time.Now()
		k.total.Store(0)
		k.log(k.since, true)
	} else {
		k.log(time.Now(), false)
	}
	k.t.opts.AfterFunc(k.t.opts.Every, k.tick)
}

// log writes a line of the events counted since the last one; under k.mu.
func (k *Kind) log(now time.Time, first bool) {
	n := k.count.Swap(0)
	total := k.total.Add(n)
	attrs := make([]slog.Attr, 0, len(k.attrs)+4)
	attrs = append(attrs, k.attrs...)
	attrs = append(attrs, slog.Int64("count", n))
	if !first {
		attrs = append(attrs, slog.Duration("in", now.Sub(k.lastAt).Round(time.Second)),
			slog.Int64("total", total), slog.Time("since", k.since))
	}
	k.lastAt = now
	k.t.logger.LogAttrs(context.Background(), k.level, k.t.msg, attrs...)
}
