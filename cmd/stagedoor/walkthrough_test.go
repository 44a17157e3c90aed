package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheWalkthroughRunsAsWritten runs every shell block of docs/walkthrough.md,
// in order, in one bash with -euo pipefail, against a fresh stack seeded as make
// run seeds it: a block that uses an unset variable, a command that fails, or an
// answer jq cannot read fails the test. Only the address differs: the stack
// listens on a free port, not localhost:8080.
func TestTheWalkthroughRunsAsWritten(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough needs %s: install it (Debian: apt-get install %s); scripts/ensure-services.sh does", tool, tool)
		}
	}
	doc, err := os.ReadFile("../../docs/walkthrough.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 8 {
		t.Fatalf("found %d shell blocks in docs/walkthrough.md", len(blocks))
	}

	env := testEnv(t)
	env["STAGEDOOR_ADMIN_TOKEN"] = "walkthrough-admin-token-0123456789"
	base, envFile := startSeededStack(t, env)
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		script.WriteString("echo '### block " + string(rune('A'+i)) + "'\n")
		script.WriteString(strings.ReplaceAll(b[1], "localhost:8080", strings.TrimPrefix(base, "http://")))
	}
	dir := filepath.Dir(envFile) // the walkthrough loads ./.env.demo
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed (%v):\n%s", err, out)
	}
	if strings.Contains(string(out), "internal-error") {
		t.Errorf("the walkthrough met a 500:\n%s", out)
	}
	t.Logf("the walkthrough's output:\n%s", out)
}
