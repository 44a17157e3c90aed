package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of one test's own: three masters and three
// replicas on free loopback ports, each with its own cluster bus port, a node
// timeout of one second, so that a replica takes over a dead master within a
// few seconds, and cluster-require-full-coverage off, so that the other
// masters serve their slots meanwhile (as docs/operations.md asks of a
// production cluster). It stops exactly the servers it started when the test ends.
type Cluster struct {
	// URL is the value of REDIS_URL for it: the six addresses, comma-separated.
	URL   string
	Addrs []string
	nodes map[string]*exec.Cmd
}

// ClusterNodeTimeout is the private cluster's cluster-node-timeout.
const ClusterNodeTimeout = time.Second

// StartCluster starts a private 3+3 Redis Cluster (redis-server and redis-cli
// must be on PATH; make test installs them) and waits until every slot is
// served.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testenv: redis-server is not on PATH (install Debian's redis-server, or run make test): %v", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("testenv: redis-cli is not on PATH (install Debian's redis-tools, or run make test): %v", err)
	}
	dir := t.TempDir()
	c := &Cluster{nodes: map[string]*exec.Cmd{}}
	t.Cleanup(c.Stop)
	for range 6 {
		// A port found free may be taken again before redis-server binds it
		// (another test's node, or a client's ephemeral port on a busy
		// machine): a node that does not come up is started again elsewhere.
		for attempt := 1; ; attempt++ {
			addr, cmd := startNode(t, server, dir)
			if waitPing(addr, 10*time.Second) {
				c.nodes[addr] = cmd
				c.Addrs = append(c.Addrs, addr)
				break
			}
			cmd.Process.Kill()
			cmd.Wait()
			if attempt == 3 {
				t.Fatalf("testenv: cluster node %s did not answer (attempt %d)", addr, attempt)
			}
		}
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("testenv: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.URL = strings.Join(c.Addrs, ",")
	c.WaitHealthy(t, 30*time.Second)
	c.waitReplicas(t, 30*time.Second)
	return c
}

// waitReplicas waits until every replica is in sync with its master, so that
// a failover finds one ready.
func (c *Cluster) waitReplicas(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, addr := range c.Addrs {
		client := redis.NewClient(&redis.Options{Addr: addr})
		for {
			info, err := client.Info(context.Background(), "replication").Result()
			if err == nil && (strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")) {
				break
			}
			if time.Now().After(deadline) {
				client.Close()
				t.Fatalf("testenv: the replica %s did not sync with its master", addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
		client.Close()
	}
}

// startNode starts one cluster node on free ports, its files in dir.
func startNode(t testing.TB, server, dir string) (string, *exec.Cmd) {
	t.Helper()
	port, bus := FreePort(t), FreePort(t) // the bus on a port of its own: port+10000 may not exist
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
		"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"),
		"--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout/time.Millisecond)),
		// A replica may take over however long ago it last heard its master: in
		// a test the data's age does not matter, the failover does.
		"--cluster-replica-validity-factor", "0",
		// While a master is down, the other masters keep serving their slots
		// (the default stops the whole cluster): what Stagedoor's cluster wants.
		"--cluster-require-full-coverage", "no",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start a cluster node: %v", err)
	}
	return addr, cmd
}

// waitPing reports whether the server at addr answers a PING within within.
func waitPing(addr string, within time.Duration) bool {
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	deadline := time.Now().Add(within)
	for client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// WaitHealthy waits until every live node says cluster_state:ok and every slot
// has a live master.
func (c *Cluster) WaitHealthy(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !c.healthy() {
		if time.Now().After(deadline) {
			t.Fatalf("testenv: the private cluster is not healthy after %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) healthy() bool {
	ctx := context.Background()
	for _, addr := range c.Live() {
		client := redis.NewClient(&redis.Options{Addr: addr})
		info, err := client.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			//lint:ignore SA1019 CLUSTER SLOTS says which master serves each range now, which is what the failover tests read; CLUSTER SHARDS would need its nodes' roles and health read apart.
			slots, serr := client.ClusterSlots(ctx).Result()
			client.Close()
			if serr != nil {
				return false
			}
			covered := 0
			for _, s := range slots {
				if len(s.Nodes) > 0 && c.alive(s.Nodes[0].Addr) {
					covered += s.End - s.Start + 1
				}
			}
			if covered != 16384 {
				return false
			}
			continue
		}
		client.Close()
		return false
	}
	return true
}

func (c *Cluster) alive(addr string) bool {
	cmd, ok := c.nodes[addr]
	return ok && cmd.ProcessState == nil
}

// Live lists the nodes not killed.
func (c *Cluster) Live() []string {
	var out []string
	for _, a := range c.Addrs {
		if c.alive(a) {
			out = append(out, a)
		}
	}
	return out
}

// Masters lists the live masters.
func (c *Cluster) Masters(t testing.TB) []string {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: c.Live()[0]})
	defer client.Close()
	//lint:ignore SA1019 CLUSTER SLOTS says which master serves each range now, which is what the failover tests read; CLUSTER SHARDS would need its nodes' roles and health read apart.
	slots, err := client.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range slots {
		if !slices.Contains(out, s.Nodes[0].Addr) {
			out = append(out, s.Nodes[0].Addr)
		}
	}
	return out
}

// MasterOf is the address of the master that serves key's slot now.
func (c *Cluster) MasterOf(t testing.TB, key string) string {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: c.Live()[0]})
	defer client.Close()
	slot, err := client.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 CLUSTER SLOTS says which master serves each range now, which is what the failover tests read; CLUSTER SHARDS would need its nodes' roles and health read apart.
	slots, err := client.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			return s.Nodes[0].Addr
		}
	}
	t.Fatalf("testenv: no master serves slot %d", slot)
	return ""
}

// Kill kills one node (SIGKILL, as a crash) and waits for it to exit.
func (c *Cluster) Kill(t testing.TB, addr string) {
	t.Helper()
	cmd, ok := c.nodes[addr]
	if !ok {
		t.Fatalf("testenv: %s is no node of this cluster", addr)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// Pause stops one node (SIGSTOP) for d and lets it go on (SIGCONT): a node
// that stalls, its connections open, answering nothing meanwhile.
func (c *Cluster) Pause(t testing.TB, addr string, d time.Duration) {
	t.Helper()
	cmd, ok := c.nodes[addr]
	if !ok {
		t.Fatalf("testenv: %s is no node of this cluster", addr)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("testenv: stop %s: %v", addr, err)
	}
	time.Sleep(d) // the stall itself
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("testenv: continue %s: %v", addr, err)
	}
}

// Stop kills every node it started; calling it twice is harmless.
func (c *Cluster) Stop() {
	for _, cmd := range c.nodes {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
}

// String names the cluster's nodes.
func (c *Cluster) String() string { return fmt.Sprintf("cluster %s", c.URL) }
