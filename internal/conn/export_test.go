package conn

import "context"

// NodeHealth says of every node of the cluster's slot map, masters and
// replicas, "ok" or "down" (see Health).
func (c *ClusterClient) NodeHealth(ctx context.Context) map[string]string {
	return c.Health(ctx).Nodes
}
