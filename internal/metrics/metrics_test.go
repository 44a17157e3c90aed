package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stagedoor/stagedoor/internal/metrics"
)

// Two instances in one process register the same counter: they share it.
func ExampleRegister() {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "stagedoor_example_total", Help: "An example."}
	one := metrics.Register(reg, prometheus.NewCounter(opts))
	two := metrics.Register(reg, prometheus.NewCounter(opts))
	one.Inc()
	two.Inc()
	fmt.Println(testutil.ToFloat64(one), one == two)
	// Output: 2 true
}
