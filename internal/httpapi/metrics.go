package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
)

// httpMetrics are the counters of the outer rings.
type httpMetrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	shed          *prometheus.CounterVec
	connections   prometheus.Gauge
	writeTimeouts prometheus.Counter
	readyChecks   *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: metrics.CounterVec(reg, "stagedoor_http_requests_total", "HTTP requests answered, by route template and status, refusals included.", "route", "status"),
		duration: metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stagedoor_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"})),
		shed:          metrics.CounterVec(reg, "stagedoor_shed_total", "Requests refused with 503 at a bound of this instance, by bound.", "bound"),
		connections:   metrics.Gauge(reg, "stagedoor_http_connections", "Client connections open on this instance's public listener (STAGEDOOR_MAX_CONNECTIONS bounds them)."),
		writeTimeouts: metrics.Counter(reg, "stagedoor_http_write_timeouts_total", "Client connections reset because a write waited STAGEDOOR_WRITE_TIMEOUT for the client to read."),
		readyChecks:   metrics.CounterVec(reg, "stagedoor_readiness_checks_total", "Checks of PostgreSQL and Redis made for GET /readyz (one at a time, at most one each 250 ms), by result.", "result"),
	}
	// Every bound from the start, at 0, so that an alert on its rate has data.
	for _, bound := range []string{"in_flight", "checkout", "stream", "connections", "metrics_connections"} {
		m.shed.WithLabelValues(bound)
	}
	for _, result := range []string{"ready", "degraded", "unavailable"} {
		m.readyChecks.WithLabelValues(result)
	}
	return m
}

// Metrics is the handler of the metrics listener (STAGEDOOR_METRICS_ADDR): GET
// /metrics, the Prometheus text of this instance's registry, and 404 for
// anything else. It is not on the public listener: a scrape gathers every
// collector, and a flood of them would take the CPU that pages need. Even
// here a flood costs little: see scrapes.
func (s *Server) Metrics() http.Handler {
	sc := &scrapes{gather: s.registry, logger: s.logger, minInterval: scrapeMinInterval}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", sc)
	return mux
}
