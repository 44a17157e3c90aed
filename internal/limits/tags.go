package limits

import "github.com/stagedoor/stagedoor/internal/ratelimit"

// BuyerTag is the hash tag of a buyer's keys that one script decides
// together: hold-buyer's bucket and her leases in flight (buyer-concurrency)
// carry {buyer:<id>}, so that they share a Redis Cluster slot and a hold's
// limits and lease are one round trip (internal/ratelimit's Rider).
const BuyerTag = "buyer"

// Tags are the limits whose buckets carry a hash tag of their identity
// (ratelimit.Definition.Tag); the others are keyed on the limit and identity.
var Tags = map[ratelimit.Name]string{HoldBuyer: BuyerTag}
