package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryLaunchedProcessCanBeStopped: scripts/cluster/down.sh signals a
// recorded pid of each of lib.sh's all_names only while it runs the program
// expected_comm names (ps -o comm=, cut at 15 characters), so every NAME
// up.sh launches needs both, or make cluster-down leaves it running (as it
// once left Alertmanager).
func TestEveryLaunchedProcessCanBeStopped(t *testing.T) {
	up, err := os.ReadFile("../scripts/cluster/up.sh")
	if err != nil {
		t.Fatal(err)
	}
	launched := regexp.MustCompile(`(?m)^\s*launch "?([a-z-]+)(\$\w+)?"?`).FindAllStringSubmatch(string(up), -1)
	if len(launched) < 5 {
		t.Fatalf("found %d launches in up.sh: %v", len(launched), launched)
	}
	for _, m := range launched {
		name := m[1]
		switch m[2] {
		case "$port":
			name += "7001"
		case "$i":
			name += "1"
		}
		out, err := exec.Command("bash", "-c", `source ../scripts/cluster/lib.sh && expected_comm "$0"`, name).Output()
		listed, _ := exec.Command("bash", "-c", `source ../scripts/cluster/lib.sh && all_names`).Output()
		if !slices.Contains(strings.Fields(string(listed)), name) {
			t.Errorf("up.sh launches %s, which lib.sh's all_names does not list: down.sh would not stop it", name)
		}
		comm := strings.TrimSpace(string(out))
		if err != nil || comm == "" || len(comm) > 15 {
			t.Errorf("up.sh launches %s, for which expected_comm says %q (%v): down.sh would leave it running", name, comm, err)
		}
	}
}
