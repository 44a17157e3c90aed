package limits

import "github.com/stagedoor/stagedoor/internal/ratelimit"

// The protections beside the token buckets, named as limits are, so that the
// admin API sets their modes under these names (PUT /v1/admin/limits/{name}).
const (
	// BuyerConcurrency: a buyer's requests in flight at once, across instances
	// (STAGEDOOR_LIMIT_BUYER_CONCURRENCY, 5 by default).
	BuyerConcurrency ratelimit.Name = "buyer-concurrency"
	// OrganizerConcurrency: an organizer's requests in flight at once
	// (STAGEDOOR_LIMIT_ORGANIZER_CONCURRENCY, 20 by default).
	OrganizerConcurrency ratelimit.Name = "organizer-concurrency"
	// FleetUsage keeps a share of the fleet's capacity (STAGEDOOR_FLEET_CAPACITY)
	// for critical requests.
	FleetUsage ratelimit.Name = "fleet-usage"
	// WorkerUtilization sheds the lowest class first when this instance is saturated.
	WorkerUtilization ratelimit.Name = "worker-utilization"
)
