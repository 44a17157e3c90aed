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
// Memory is bounded: at most Options.MaxAdmissions entries (default
// DefaultMaxAdmissions), in shards; a shard that is full first drops its ended
// entries, and when none has ended the new admission is not remembered (that
// buyer's holds then ask the room each time, as without the memory).

// DefaultMaxAdmissions bounds the admissions an instance remembers when
// Options.MaxAdmissions is 0: about 150 bytes each, some 15 MB in all.
const DefaultMaxAdmissions = 100_000

const admissionShards = 16

type admissionKey struct{ event, buyer string }

type admissionShard struct {
	mu sync.Mutex
	m  map[admissionKey]time.Time // the admission's end, on the instance's clock
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
		a.shards[i].m = make(map[admissionKey]time.Time)
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

// current reports whether the buyer's admission to the event is remembered
// and has not ended.
func (a *admissions) current(eventID, buyerID string) bool {
	k := admissionKey{eventID, buyerID}
	sh := a.shard(k)
	now := a.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	end, ok := sh.m[k]
	if ok && !now.Before(end) {
		delete(sh.m, k)
		return false
	}
	return ok
}

// remember keeps an admission read by a call that started at start: st is
// the call's answer, on Redis's clock.
func (a *admissions) remember(eventID, buyerID string, start time.Time, st Status) {
	if st.State != Admitted {
		return
	}
	end := start.Add(st.AdmittedUntil.Sub(st.Now))
	now := a.clock()
	if !now.Before(end) {
		return
	}
	k := admissionKey{eventID, buyerID}
	sh := a.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[k]; !ok && len(sh.m) >= a.max {
		for kk, e := range sh.m {
			if !now.Before(e) {
				delete(sh.m, kk)
			}
		}
		if len(sh.m) >= a.max {
			return
		}
	}
	sh.m[k] = end
}

// forget drops the buyer's remembered admission to the event.
func (a *admissions) forget(eventID, buyerID string) {
	k := admissionKey{eventID, buyerID}
	sh := a.shard(k)
	sh.mu.Lock()
	delete(sh.m, k)
	sh.mu.Unlock()
}

// len is how many admissions are remembered, ended ones not yet dropped included.
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

// Forget makes this instance forget the buyer's admission to the event, so
// that her next hold asks the room again. Nothing in this package revokes an
// admission before its end; a revocation added later must call it on every
// instance.
func (s *Service) Forget(eventID, buyerID string) { s.admitted.forget(eventID, buyerID) }

// Remembered is how many admissions this instance remembers (ended ones not
// yet dropped included), at most Options.MaxAdmissions.
func (s *Service) Remembered() int { return s.admitted.len() }
