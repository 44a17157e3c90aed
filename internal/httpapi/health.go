package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// The public probes cost next to nothing, however many call them: /healthz is
// a constant, and /readyz answers a result of its checks at most readyMaxAge
// old, the checks running one at a time whoever asks (a flood of /readyz would
// otherwise take database connections, and the worker utilization shedder
// would shed pages for the pool's waits). They are exempt from the in-flight
// bound and the shedders, so that a busy instance stays in rotation;
// STAGEDOOR_MAX_CONNECTIONS bounds them with everything else.

// healthzBody is GET /healthz's whole answer.
var healthzBody = []byte(`{"status":"ok"}` + "\n")

// healthz answers while the process runs.
func (s *Server) healthz(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, healthzBody)
}

// readyMaxAge is how old a readiness result /readyz may answer: the end of the
// check it came from at most this long before.
const readyMaxAge = 250 * time.Millisecond

// Readiness check deadlines: PostgreSQL's ping, then Redis's.
const (
	readyPostgresTimeout = 2 * time.Second
	readyRedisTimeout    = 250 * time.Millisecond
)

// readyz is 200 while PostgreSQL answers; Redis down is "degraded", still 200,
// because every use of Redis has a policy for its absence. On a Redis Cluster
// it says how each node answers (redis_nodes): one dead master degrades only
// the keys it serves. The answer is a check's result at most readyMaxAge old;
// a caller that finds none waits for the one check under way (at most the
// checks' deadlines), or starts it.
func (s *Server) readyz(c echo.Context) error {
	r := s.ready.get(s.checkReadiness)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(r.status, echo.MIMEApplicationJSON, r.body)
}

// readiness is the last readiness result, and the check under way.
type readiness struct {
	mu      sync.Mutex
	last    *readyResult
	running chan struct{} // closed when the check under way ends; nil: none
	// lonely is the Redis Cluster masters without a replica at the last check,
	// written by the checks only (one at a time), so that a loss of
	// redundancy is logged when it begins and when it ends, not at every check.
	lonely []string
}

// readyResult is one check's answer, encoded once for every caller.
type readyResult struct {
	status int
	body   []byte
	at     time.Time // when the check ended
}

// get returns the last result while it is at most readyMaxAge old; otherwise
// it waits for the check under way, starting one (check) when none is.
func (r *readiness) get(check func() *readyResult) *readyResult {
	r.mu.Lock()
	if r.last != nil && time.Since(r.last.at) <= readyMaxAge {
		last := r.last
		r.mu.Unlock()
		return last
	}
	if r.running == nil {
		done := make(chan struct{})
		r.running = done
		go func() {
			result := check()
			r.mu.Lock()
			r.last, r.running = result, nil
			r.mu.Unlock()
			close(done)
		}()
	}
	done := r.running
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// checkReadiness pings PostgreSQL and Redis (each node of a Cluster) under
// deadlines of its own, not a caller's: its result serves every caller.
func (s *Server) checkReadiness() *readyResult {
	body := map[string]any{"status": "ready", "postgres": "ok", "redis": "ok"}
	status := http.StatusOK

	pgCtx, cancel := context.WithTimeout(context.Background(), readyPostgresTimeout)
	defer cancel()
	if err := s.probes.Postgres(pgCtx); err != nil {
		s.logger.Warn("readiness: PostgreSQL does not answer", "error", err)
		body["status"], body["postgres"] = "unavailable", "unavailable"
		status = http.StatusServiceUnavailable
	}
	// Never shorter than a limiter's call may take (STAGEDOOR_REDIS_TIMEOUT):
	// a Redis the limiters wait for is not one readiness calls degraded.
	redisCtx, cancelRedis := context.WithTimeout(context.Background(), max(readyRedisTimeout, s.config.RedisTimeout))
	defer cancelRedis()
	if s.probes.Cluster != nil {
		h := s.probes.Cluster(redisCtx)
		body["redis_nodes"] = h.Nodes
		for addr, state := range h.Nodes {
			if state != "ok" {
				s.logger.Warn("readiness: a Redis Cluster node does not answer", "node", addr)
				body["redis"] = "degraded"
			}
		}
		// Redundancy lost is no reason to take the instance out of rotation:
		// every key is still served. It is said, for the operator.
		body["redis_redundancy"] = "ok"
		if len(h.WithoutReplica) > 0 {
			body["redis_redundancy"] = "lost"
			body["redis_masters_without_replica"] = h.WithoutReplica
		}
		s.noteRedundancy(h.WithoutReplica)
	} else if err := s.probes.Redis(redisCtx); err != nil {
		s.logger.Warn("readiness: Redis does not answer", "error", err)
		body["redis"] = "degraded"
	}
	result := body["status"].(string)
	if result == "ready" && body["redis"] != "ok" {
		result = "degraded"
	}
	s.metrics.readyChecks.WithLabelValues(result).Inc()
	encoded, _ := json.Marshal(body) // strings, a map of strings and a list: cannot fail
	return &readyResult{status: status, body: append(encoded, '\n'), at: time.Now()}
}

// noteRedundancy logs a WARN when some masters of the cluster are found
// without a replica, or others than at the last check, and an INFO when every
// master has one again.
func (s *Server) noteRedundancy(lonely []string) {
	before := s.ready.lonely
	s.ready.lonely = lonely
	switch {
	case slices.Equal(before, lonely):
	case len(lonely) > 0:
		s.logger.Warn("readiness: Redis Cluster masters without a replica in sync (redundancy lost): the next death of one leaves its slots unserved",
			"masters", lonely)
	default:
		s.logger.Info("readiness: every Redis Cluster master has a replica in sync again", "were_without", before)
	}
}
