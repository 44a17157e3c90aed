package concurrency

// Leases is how many leases this instance holds for requests in flight (the
// value of stagedoor_concurrency_leases for this Limiter).
func (l *Limiter) Leases() int { return l.leases.len() }
