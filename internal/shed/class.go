// Package shed holds the load shedders that stand behind the rate limits:
// fleet-usage, which keeps a share of the fleet's configured capacity for
// critical traffic, and worker-utilization, which sheds the lowest class first
// when this instance is saturated. Each route has a Class (internal/httpapi's
// routes.go assigns it), and a shedder refuses the lower classes first.
package shed

// Class is how much a route's requests matter when there is not room for all:
// a shedder refuses Sheddable first, then Normal, and never Critical. Exempt
// routes (health checks, metrics) are never counted or refused.
type Class uint8

const (
	// Exempt: health checks and metrics; never counted, never shed.
	Exempt Class = iota
	// Critical: money and the door (checkout, scans, login): a reserve is kept for them.
	Critical
	// Normal: holds and the waiting room.
	Normal
	// Sheddable: reads that can wait or be retried (event lists, seat maps, reports, audits, pages).
	Sheddable
)

// Classes are the classes that are counted, from the most important.
var Classes = []Class{Critical, Normal, Sheddable}

// String is the class's name, as in metrics and logs: "exempt", "critical",
// "normal" or "sheddable".
func (c Class) String() string {
	switch c {
	case Exempt:
		return "exempt"
	case Critical:
		return "critical"
	case Normal:
		return "normal"
	case Sheddable:
		return "sheddable"
	}
	return "unknown"
}
