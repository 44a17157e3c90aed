// Package lab is the rate-limiting lab: the four classic algorithms, each as one
// Lua script on Redis's clock (fixed window, sliding window log, sliding window
// counter, token bucket), Stagedoor's own limiter (GCRA, internal/ratelimit) and
// two Go libraries one would otherwise pick (go-redis/redis_rate, GCRA, and
// ulule/limiter with its Redis store, a fixed window), measured side by side in
// one run by five experiments:
//
//  1. Boundary: 100 requests just before a window boundary and 100 just after,
//     at 100 a second; the most allowed in any sliding second (RunBoundary).
//  2. Speed: p50/p99 of one decision and decisions a second from 50 goroutines,
//     beside a raw INCR in the same run (RunSpeed).
//  3. Memory: used_memory per user at limit 100 and 10,000 (RunMemory).
//  4. Atomicity: INCR then EXPIRE as two commands with a simulated crash between
//     them, against one script (RunAtomicity).
//  5. Global: three "replicas" (three clients) sharing a 500/s limit from 20
//     connections (RunGlobal).
//
// It reproduces the table of the lab of lesson 13, "Rate Limiting &
// Backpressure", whose published figures are kept here as constants (report.go)
// and printed beside the measured ones. "stagedoor lab" runs it (Main); the
// server never imports it. Every key it writes lives under one prefix of its
// own, and Cleanup removes them all. docs/lab.md shows a run and what it means.
package lab
