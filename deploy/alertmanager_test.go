package deploy

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

func TestAlertmanagerConfig(t *testing.T) {
	amtool := need(t, "amtool", "prometheus-alertmanager")
	out := run(t, amtool, "check-config", "alertmanager/alertmanager.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("amtool check-config:\n%s", out)
	}
}

// TestAFiringAlertReachesAlertmanager: Prometheus with the cluster's template
// (its alerting section), a rule that fires at once, and Alertmanager with
// deploy/alertmanager/alertmanager.yml: the alert arrives at Alertmanager,
// routed to the receiver its severity names. Both run on free loopback ports
// and are stopped by pid.
func TestAFiringAlertReachesAlertmanager(t *testing.T) {
	alertmanager := need(t, "prometheus-alertmanager", "prometheus-alertmanager")
	prometheus := need(t, "prometheus", "prometheus")
	dir := t.TempDir()
	amAddr, promAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	config, err := filepath.Abs("alertmanager/alertmanager.yml")
	if err != nil {
		t.Fatal(err)
	}
	start(t, alertmanager, "--config.file="+config, "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")

	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: test
    rules:
      - alert: StagedoorTestCritical
        expr: vector(1)
        labels:
          severity: critical
`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := localPrometheusData(t)
	data["RuleFiles"], data["Targets"], data["ScrapeInterval"], data["AlertmanagerTarget"] = []string{rules}, []string{promAddr}, "1s", amAddr
	promConfig := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promConfig, render(t, "../scripts/cluster/prometheus.yml.tmpl", data), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, prometheus, "--config.file="+promConfig, "--storage.tsdb.path="+filepath.Join(dir, "prom"),
		"--web.listen-address="+promAddr,
		// An alert that fires before Alertmanager is discovered is dropped and
		// sent again after the resend delay (1 m by default).
		"--rules.alert.resend-delay=1s")

	var alerts []struct {
		Labels    map[string]string       `json:"labels"`
		Receivers []struct{ Name string } `json:"receivers"`
	}
	testenv.Eventually(t, 60*time.Second, func() bool {
		alerts = nil
		if resp, err := http.Get("http://" + amAddr + "/api/v2/alerts"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&alerts)
			resp.Body.Close()
		}
		return len(alerts) > 0
	}, "an alert to reach Alertmanager after Prometheus started")
	if a := alerts[0]; len(alerts) != 1 || a.Labels["alertname"] != "StagedoorTestCritical" ||
		len(a.Receivers) != 1 || a.Receivers[0].Name != "on-call" {
		t.Errorf("Alertmanager holds %+v; want StagedoorTestCritical, routed to on-call", alerts)
	}
}

// start runs a program in the background until the test ends (killed by pid).
func start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	log := filepath.Join(t.TempDir(), filepath.Base(name)+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if t.Failed() && !testing.Verbose() || t.Failed() {
			out, _ := os.ReadFile(log)
			t.Logf("%s's log:\n%s", filepath.Base(name), out)
		}
	})
}
