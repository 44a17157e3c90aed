package onsale

import (
	"testing"
	"time"
)

func TestRedisPhaseLeavesTheProbesOut(t *testing.T) {
	t.Parallel()
	before := parseInfo("# Commandstats\r\ncmdstat_evalsha:calls=100,usec=900,usec_per_call=9.00\r\ncmdstat_info:calls=4,usec=40\r\n" +
		"# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.000000\r\n")
	after := parseInfo("# Commandstats\r\ncmdstat_evalsha:calls=130,usec=1200\r\ncmdstat_get:calls=5,usec=5\r\ncmdstat_info:calls=9,usec=90\r\n" +
		"# CPU\r\nused_cpu_sys:1.700000\r\nused_cpu_user:2.300000\r\n")
	at := time.Now()
	p := phase("polls", redisSnapshot{at: at, nodes: map[string]nodeStats{"n1": before}},
		redisSnapshot{at: at.Add(2 * time.Second), nodes: map[string]nodeStats{"n1": after, "n2": after}}, 700)
	if p.Commands != 35 || p.ByCommand["evalsha"] != 30 || p.ByCommand["get"] != 5 || p.ByCommand["info"] != 0 {
		t.Errorf("commands %d by command %v; want 35: 30 evalsha and 5 get, the probes' INFO left out, n2 (no earlier snapshot) too", p.Commands, p.ByCommand)
	}
	if p.PerRequest != 0.05 || p.NodeCPU["n1"] != 0.25 || p.MaxNodeCPU != 0.25 {
		t.Errorf("%.3f a request, CPU %v (max %.2f); want 0.05 and 0.25 of a thread (0.5 s in 2 s)", p.PerRequest, p.NodeCPU, p.MaxNodeCPU)
	}
}

func TestLatencyHistogramPercentiles(t *testing.T) {
	t.Parallel()
	var h latencyHistogram
	for i := 1; i <= 100; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	if p50 := h.percentileMS(50); p50 < 50 || p50 > 50*histGrowth+0.01 {
		t.Errorf("p50 = %.2f ms, want 50 ms to within a bucket", p50)
	}
	if p99 := h.percentileMS(99); p99 < 99 || p99 > 99*histGrowth+0.01 {
		t.Errorf("p99 = %.2f ms, want 99 ms to within a bucket", p99)
	}
}
