// Package metrics registers Prometheus collectors the one way Stagedoor does:
// a collector already registered under the same description (a second instance
// in one process, as tests make) is reused, so its counts add up; any other
// conflict is a programming error and panics.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the collector of
// the same description already registered. A nil reg registers nothing.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Errorf("metrics: register: %w", err))
	}
	return c
}

// Counter registers a counter (see Register).
func Counter(reg prometheus.Registerer, name, help string) prometheus.Counter {
	return Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

// CounterVec registers a counter with labels (see Register).
func CounterVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.CounterVec {
	return Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
}

// Gauge registers a gauge (see Register).
func Gauge(reg prometheus.Registerer, name, help string) prometheus.Gauge {
	return Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

// GaugeVec registers a gauge with labels (see Register).
func GaugeVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.GaugeVec {
	return Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
}
