package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
)

// httpMetrics are the counters of the outer rings.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	shed     *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stagedoor_http_requests_total",
			Help: "HTTP requests answered, by route template and status, refusals included.",
		}, []string{"route", "status"})),
		duration: metrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stagedoor_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"})),
		shed: metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stagedoor_shed_total",
			Help: "Requests refused with 503 at a bound of this instance, by bound.",
		}, []string{"bound"})),
	}
	// Every bound from the start, at 0, so that an alert on its rate has data.
	for _, bound := range []string{"in_flight", "checkout", "stream"} {
		m.shed.WithLabelValues(bound)
	}
	return m
}
