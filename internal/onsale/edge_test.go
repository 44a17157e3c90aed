package onsale_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// haproxyTemplate is the edge of make cluster (scripts/cluster/up.sh renders
// it too): round robin, health checks, retries on a dead instance, the edge
// limit per client address, X-Served-By.
const haproxyTemplate = "../../scripts/cluster/haproxy.cfg.tmpl"

// edgeSource is the address HAProxy dials the instances from, the one they
// trust (STAGEDOOR_TRUSTED_PROXIES), as make cluster has it: on one machine
// the clients come from 127.0.0.1 too, and must not be trusted.
const edgeSource = "127.0.80.80"

// backend is an instance behind the edge, as the template names it.
type backend struct {
	Name string
	Addr string
}

// startEdge starts HAProxy with the cluster's configuration in front of
// backends and returns its URL once it answers /healthz through a live
// backend. It fails the test when haproxy is not installed: the test is about
// the stack as deployed, edge included.
func startEdge(t *testing.T, backends []backend) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatalf("haproxy is not on PATH: this test runs the on-sale through the edge of make cluster; install it "+
			"(Debian and Ubuntu: apt-get install haproxy; macOS: brew install haproxy): %v", err)
	}
	text, err := os.ReadFile(haproxyTemplate)
	if err != nil {
		t.Fatalf("the edge's configuration template: %v", err)
	}
	tmpl, err := template.New("haproxy").Option("missingkey=error").Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	data := map[string]any{
		"Listen":      listen,
		"StatsListen": net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t))),
		"Backends":    backends,
		"Source":      edgeSource,
		"Resolver":    "",
		"MaxConn":     1000,
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "haproxy.cfg")
	f, err := os.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Execute(f, data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	logPath := filepath.Join(dir, "haproxy.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg) // -db: in the foreground, logs to stderr
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			t.Logf("haproxy's log, last lines:\n%s", tail(logPath, 30))
		}
	})
	url := "http://" + listen
	if !testenv.Poll(15*time.Second, 50*time.Millisecond, func() bool { err = testenv.GetOK(url + "/healthz")(); return err == nil }) {
		t.Fatalf("haproxy on %s does not answer /healthz (%v); its log:\n%s", listen, err, tail(logPath, 30))
	}
	return url
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprint(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
