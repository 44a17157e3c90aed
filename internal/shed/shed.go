package shed

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/protect"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// The shedders' names, as in metrics, logs and the admin API.
const (
	// FleetUsage is the name of the fleet usage shedder (Fleet).
	FleetUsage ratelimit.Name = "fleet-usage"
	// WorkerUtilization is the name of the worker utilization shedder (Utilization).
	WorkerUtilization ratelimit.Name = "worker-utilization"
)

// Outcome is what a shedder decided about one request: the protections'
// Outcome (protect.Outcome), with shed and shadow_shed where a limit says
// denied and shadow_denied. It is also the decision label of
// stagedoor_shed_decisions_total.
type Outcome = protect.Outcome

const (
	// OutcomeAllowed: the shedder let the request through (an Exempt request
	// too, though it is not counted).
	OutcomeAllowed = protect.OutcomeAllowed
	// OutcomeShed: an enforcing shedder refused the request.
	OutcomeShed Outcome = "shed"
	// OutcomeShadowShed: a shadow shedder would have refused; the request goes on.
	OutcomeShadowShed Outcome = "shadow_shed"
	// OutcomeFailOpen: the shedder could not decide (Redis did not answer) and
	// let the request through.
	OutcomeFailOpen = protect.OutcomeFailOpen
	// OutcomeOff: the shedder is off and was not evaluated.
	OutcomeOff = protect.OutcomeOff
)

// The outcomes' places in a decisions row, so that the request path counts
// by index, not by label.
const (
	iAllowed = iota
	iShed
	iShadowShed
	iFailOpen
	iOff
	numOutcomes
)

// outcomes are the counted outcomes, in the order of the indexes above.
var outcomes = [numOutcomes]Outcome{OutcomeAllowed, OutcomeShed, OutcomeShadowShed, OutcomeFailOpen, OutcomeOff}

// Decision is a shedder's answer about one request.
type Decision struct {
	// Allowed is false only when an enforcing shedder refused (OutcomeShed).
	Allowed bool
	// Outcome is what the shedder decided.
	Outcome Outcome
	// Shedder names the shedder: FleetUsage or WorkerUtilization.
	Shedder ratelimit.Name
	// RetryAfter is how long a refused caller should wait before trying again;
	// set for OutcomeShed and OutcomeShadowShed, zero otherwise.
	RetryAfter time.Duration
	// Reason says why, for the detail of the problem (set with RetryAfter),
	// such as "the fleet's sheddable traffic (2950 req/s) is above its share
	// (200 req/s of a capacity of 1000 req/s)".
	Reason string
}

// Shedder is what Fleet and Utilization have in common, for the ring that
// calls them and the admin API that switches them.
type Shedder interface {
	// Admit decides one request of the class, without I/O: on the request path.
	Admit(class Class) Decision
	// Run is the shedder's background loop; it returns when ctx ends.
	Run(ctx context.Context)
	// Name is FleetUsage or WorkerUtilization.
	Name() ratelimit.Name
	// Mode is the mode in force.
	Mode() ratelimit.Mode
	// SetMode changes the mode for the requests that follow.
	SetMode(m ratelimit.Mode)
}

// numClasses bounds the arrays indexed by Class (Exempt's place is unused).
const numClasses = int(Sheddable) + 1

// counted is the class a request is counted as: a class beyond Sheddable
// (a programming error) is treated as Sheddable, the lowest.
func counted(c Class) Class {
	if c > Sheddable {
		return Sheddable
	}
	return c
}

// decisions are one shedder's stagedoor_shed_decisions_total series, resolved
// once so that counting costs one atomic add.
type decisions [numClasses][numOutcomes]prometheus.Counter

// newDecisions registers the counter with reg (nil: registers nothing) and
// creates every class × decision series of the shedder at 0.
func newDecisions(reg prometheus.Registerer, shedder ratelimit.Name) *decisions {
	vec := metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stagedoor_shed_decisions_total",
		Help: "Load-shedding decisions, by shedder (fleet-usage, worker-utilization), class " +
			"(critical, normal, sheddable) and decision (allowed, shed, shadow_shed, fail_open, off).",
	}, []string{"shedder", "class", "decision"}))
	var d decisions
	for _, c := range Classes {
		for i, o := range outcomes {
			d[c][i] = vec.WithLabelValues(string(shedder), c.String(), string(o))
		}
	}
	return &d
}

// decide counts the decision and returns it.
func (d *decisions) decide(c Class, i int, dec Decision) Decision {
	d[c][i].Inc()
	return dec
}

// classGauges returns one gauge a class of a registered GaugeVec.
func classGauges(reg prometheus.Registerer, name, help string) [numClasses]prometheus.Gauge {
	vec := metrics.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"class"}))
	var g [numClasses]prometheus.Gauge
	for _, c := range Classes {
		g[c] = vec.WithLabelValues(c.String())
	}
	return g
}
