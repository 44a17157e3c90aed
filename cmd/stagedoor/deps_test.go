package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheServerHoldsNoTools: the server binary is built without the
// rate-limiting lab (cmd/ratelimit-lab) and the libraries only it measures.
func TestTheServerHoldsNoTools(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, tool := range []string{"/internal/ratelimit/lab", "github.com/go-redis/redis_rate", "github.com/ulule/limiter"} {
			if strings.Contains(dep, tool) {
				t.Errorf("the server depends on %s", dep)
			}
		}
	}
}
