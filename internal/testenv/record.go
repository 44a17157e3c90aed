package testenv

import "sync"

// Record is what a test's concurrent loops record, by kind: a failover
// test's requests, each with the slot maps its client had fetched when it
// started. The zero Record is empty and ready; it is safe for concurrent use.
type Record[S any] struct {
	mu sync.Mutex
	by map[string][]S
}

// Add records s under kind.
func (r *Record[S]) Add(kind string, s S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string][]S{}
	}
	r.by[kind] = append(r.by[kind], s)
}

// Count is how many of kind's records keep holds for.
func (r *Record[S]) Count(kind string, keep func(S) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.by[kind] {
		if keep(s) {
			n++
		}
	}
	return n
}

// Of is kind's records so far, in the order added.
func (r *Record[S]) Of(kind string) []S {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]S(nil), r.by[kind]...)
}
