package waitroom

import (
	"hash/maphash"
	"sync"
	"time"
)

// Admissions remembered by an instance.
//
// An admission is a fact with an end: the buyer may hold seats of the event
// until AdmittedUntil, and nothing in this package ends it sooner (no
// operation removes a live admission: only a join after it lapsed removes the
// buyer, and the room's keys expire after its last admission's end). So every
// admission this instance reads, from a join, a poll or a hold's check, is
// remembered until it ends, and CheckAdmitted answers from memory until then
// without calling the room: a buyer's holds after her first on an instance
// cost the room's node nothing, whatever client she uses.
//
// Its end is kept on this instance's monotonic clock, as the time the call
// that read it started plus what was left of it by Redis's clock when the
// script ran, so it never outlives the admission (the call started before the
// script ran) and no clock skew between the instance and Redis matters. A
// lapsed admission is never remembered.
//
// A revocation before the end, should one ever be added, must reach every
// instance (Forget, called on each, for example from a published message), or
// its remembered entries would be honoured until the admission's end: that is
// the latency such a revocation would have without it.
//
// A refusal is remembered too, briefly: a buyer not admitted (waiting, never
// queued, lapsed) is refused from memory for RefusalMemory, or until her
// turn if that comes sooner, so that a bot hammering holds without an
// admission costs the room's node a call a second an instance, not a call a
// hold (at a stadium's peak the bots' checks were nearly half of the room's
// master: docs/scaling.md). It never admits anyone; its cost is that a buyer
// admitted sooner than her answer said (the rate was raised) or who joined
// on another instance is refused here for up to RefusalMemory. A join on
// this instance, a poll here that finds her admitted, and any admission read
// here end it at once.
//
// Memory is bounded: at most Options.MaxAdmissions entries (default
// DefaultMaxAdmissions), in shards; a shard that is full first drops its ended
// entries, and when none has ended the new admission is not remembered (that
// buyer's holds then ask the room each time, as without the memory).

// DefaultMaxAdmissions bounds the admissions an instance remembers when
// Options.MaxAdmissions is 0: about 150 bytes each, some 15 MB in all.
const DefaultMaxAdmissions = 100_000

// RefusalMemory is the longest a refusal is remembered.
const RefusalMemory = time.Second

const admissionShards = 16

type admissionKey struct{ event, buyer string }

// memo is a remembered admission (refusal nil) or refusal, until end on the
// instance's clock.
type memo struct {
	end     time.Time
	refusal error
}

type admissionShard struct {
	mu sync.Mutex
	m  map[admissionKey]memo
}

// admissions is what this instance remembers. Safe for concurrent use.
type admissions struct {
	seed   maphash.Seed
	max    int // entries a shard keeps at most
	clock  func() time.Time
	shards [admissionShards]admissionShard
}

func newAdmissions(limit int, clock func() time.Time) *admissions {
	a := &admissions{seed: maphash.MakeSeed(), max: max(1, limit/admissionShards), clock: clock}
	for i := range a.shards {
		a.shards[i].m = make(map[admissionKey]memo)
	}
	return a
}

func (a *admissions) shard(k admissionKey) *admissionShard {
	var h maphash.Hash
	h.SetSeed(a.seed)
	h.WriteString(k.event)
	h.WriteString(k.buyer)
	return &a.shards[h.Sum64()%admissionShards]
}

// current reports whether the buyer's admission to the event, or a refusal
// of it, is remembered and has not ended: ok, and the refusal (nil for an
// admission).
func (a *admissions) current(eventID, buyerID string) (refusal error, ok bool) {
	k := admissionKey{eventID, buyerID}
	sh := a.shard(k)
	now := a.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m, ok := sh.m[k]
	if ok && !now.Before(m.end) {
		delete(sh.m, k)
		return nil, false
	}
	return m.refusal, ok
}

// remember keeps an admission read by a call that started at start: st is
// the call's answer, on Redis's clock.
func (a *admissions) remember(eventID, buyerID string, start time.Time, st Status) {
	if st.State != Admitted {
		return
	}
	a.keep(admissionKey{eventID, buyerID}, memo{end: start.Add(st.AdmittedUntil.Sub(st.Now))}, true)
}

// refuse keeps a refusal read by a call that started at start, for d at most
// RefusalMemory, unless an admission is remembered.
func (a *admissions) refuse(eventID, buyerID string, start time.Time, d time.Duration, refusal error) {
	a.keep(admissionKey{eventID, buyerID}, memo{end: start.Add(min(d, RefusalMemory)), refusal: refusal}, false)
}

// keep stores m if it has not ended, over what is remembered when over, else
// only where nothing current is.
func (a *admissions) keep(k admissionKey, m memo, over bool) {
	now := a.clock()
	if !now.Before(m.end) {
		return
	}
	sh := a.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	old, ok := sh.m[k]
	if ok && !over && now.Before(old.end) {
		return
	}
	if !ok && len(sh.m) >= a.max {
		for kk, e := range sh.m {
			if !now.Before(e.end) {
				delete(sh.m, kk)
			}
		}
		if len(sh.m) >= a.max {
			return
		}
	}
	sh.m[k] = m
}

// forget drops what is remembered of the buyer and the event: all of it, or
// only a refusal.
func (a *admissions) forget(eventID, buyerID string, refusalOnly bool) {
	k := admissionKey{eventID, buyerID}
	sh := a.shard(k)
	sh.mu.Lock()
	if m, ok := sh.m[k]; ok && (!refusalOnly || m.refusal != nil) {
		delete(sh.m, k)
	}
	sh.mu.Unlock()
}

// len is how many admissions and refusals are remembered, ended ones not yet
// dropped included.
func (a *admissions) len() int {
	n := 0
	for i := range a.shards {
		sh := &a.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
