package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stagedoor/stagedoor/internal/conn"
)

// healthz answers while the process runs.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is 200 while PostgreSQL answers; Redis down is "degraded", still 200,
// because every use of Redis has a policy for its absence. On a Redis Cluster
// it says how each node answers (redis_nodes): one dead master degrades only
// the keys it serves.
func (s *Server) readyz(c echo.Context) error {
	ctx := c.Request().Context()
	body := map[string]any{"status": "ready", "postgres": "ok", "redis": "ok"}
	status := http.StatusOK

	pgCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.DB.Ping(pgCtx); err != nil {
		s.Logger.Warn("readiness: PostgreSQL does not answer", "error", err)
		body["status"], body["postgres"] = "unavailable", "unavailable"
		status = http.StatusServiceUnavailable
	}
	redisCtx, cancelRedis := context.WithTimeout(ctx, 250*time.Millisecond)
	defer cancelRedis()
	if cluster, ok := s.Redis.(*conn.ClusterClient); ok {
		nodes := cluster.NodeHealth(redisCtx)
		body["redis_nodes"] = nodes
		for addr, state := range nodes {
			if state != "ok" {
				s.Logger.Warn("readiness: a Redis Cluster node does not answer", "node", addr)
				body["redis"] = "degraded"
			}
		}
		return c.JSON(status, body)
	}
	if err := s.Redis.Ping(redisCtx).Err(); err != nil {
		s.Logger.Warn("readiness: Redis does not answer", "error", err)
		body["redis"] = "degraded"
	}
	return c.JSON(status, body)
}

// metricsPage serves the Prometheus text of this instance's registry.
func (s *Server) metricsPage() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
}
