package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// need returns the path of tool, and fails the test when it is not on PATH:
// these checks are not optional (CI installs the tools with scripts/ensure-ops.sh).
func need(t *testing.T, tool, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is not on PATH: install Debian's %s (bash scripts/ensure-ops.sh does, as root; make test runs it)", tool, pkg)
	}
	return path
}

// run runs a command and fails the test, showing its output, when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

var (
	renderOnce sync.Once
	renderBin  string
	renderErr  error
	renderOut  []byte
)

// render runs scripts/cluster/render, built once, on template with data and
// returns what it wrote.
func render(t *testing.T, template string, data any) []byte {
	t.Helper()
	renderOnce.Do(func() {
		dir, err := os.MkdirTemp("", "stagedoor-render-")
		if err != nil {
			renderErr = err
			return
		}
		renderBin = filepath.Join(dir, "render")
		renderOut, renderErr = exec.Command("go", "build", "-o", renderBin, "../scripts/cluster/render").CombinedOutput()
	})
	if renderErr != nil {
		t.Fatalf("go build ../scripts/cluster/render: %v\n%s", renderErr, renderOut)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dataFile, outFile := filepath.Join(dir, "data.json"), filepath.Join(dir, "out")
	if err := os.WriteFile(dataFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, renderBin, "-template", template, "-data", dataFile, "-out", outFile)
	out, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if renderBin != "" {
		os.RemoveAll(filepath.Dir(renderBin))
	}
	os.Exit(code)
}

func TestAlertRules(t *testing.T) {
	promtool := need(t, "promtool", "prometheus")
	run(t, promtool, "check", "rules", "prometheus/alerts.yml")
	run(t, promtool, "test", "rules", "prometheus/alerts_test.yml")
}

// The local cluster's shape, as scripts/cluster/up.sh fills the templates:
// Prometheus scrapes each instance's metrics listener (lib.sh's metrics_port).
func localPrometheusData(t *testing.T) map[string]any {
	alerts, err := filepath.Abs("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, i := range []string{"1", "2", "3"} {
		targets = append(targets, "127.0.0.1:"+clusterPort(t, "metrics_port", i))
	}
	return map[string]any{"ScrapeInterval": "5s", "RuleFiles": []string{alerts},
		"Targets": targets, "HAProxyTarget": "127.0.0.1:8404", "AlertmanagerTarget": "127.0.0.1:9093"}
}

// clusterPort runs one of scripts/cluster/lib.sh's port functions.
func clusterPort(t *testing.T, fn, instance string) string {
	t.Helper()
	return strings.TrimSpace(run(t, "bash", "-c", `source ../scripts/cluster/lib.sh && "$0" "$1"`, fn, instance))
}

// TestPrometheusScrapesTheMetricsListeners: /metrics is not on an instance's
// API but on its metrics listener (STAGEDOOR_METRICS_ADDR), and both clusters
// scrape it there: docker compose's Prometheus targets the port the instances
// are given, make cluster's the port each instance is started with, and
// neither targets an API port.
func TestPrometheusScrapesTheMetricsListeners(t *testing.T) {
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Instance struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"x-stagedoor-instance"`
		Services map[string]yaml.Node `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(compose.Instance.Environment["STAGEDOOR_METRICS_ADDR"])
	if err != nil || port == "" {
		t.Fatalf("docker-compose.yml's instances have no STAGEDOOR_METRICS_ADDR (%q): Prometheus could not reach their metrics",
			compose.Instance.Environment["STAGEDOOR_METRICS_ADDR"])
	}
	targets, _ := readJSON(t, "compose/prometheus.json")["Targets"].([]any)
	if len(targets) != 3 {
		t.Fatalf("compose/prometheus.json targets %v, want the three instances", targets)
	}
	for _, target := range targets {
		host, p, err := net.SplitHostPort(fmt.Sprint(target))
		if err != nil || p != port {
			t.Errorf("compose Prometheus target %v: want port %s, the instances' STAGEDOOR_METRICS_ADDR", target, port)
		}
		if _, ok := compose.Services[host]; !ok {
			t.Errorf("compose Prometheus target %v names no service of docker-compose.yml", target)
		}
	}

	up, err := os.ReadFile("../scripts/cluster/up.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`STAGEDOOR_METRICS_ADDR="127.0.0.1:$(metrics_port "$i")"`, `\"127.0.0.1:$(metrics_port "$i")\"`} {
		if !bytes.Contains(up, []byte(want)) {
			t.Errorf("scripts/cluster/up.sh lacks %s: its instances' metrics and Prometheus's targets must be the same ports", want)
		}
	}
	for _, target := range localPrometheusData(t)["Targets"].([]string) {
		for _, i := range []string{"1", "2", "3"} {
			if strings.HasSuffix(target, ":"+clusterPort(t, "instance_port", i)) {
				t.Errorf("make cluster's Prometheus scrapes %s, an instance's API", target)
			}
		}
	}
}

func localHAProxyData() map[string]any {
	return map[string]any{"Listen": "127.0.0.1:8080", "StatsListen": "127.0.0.1:8404", "MaxConn": 1000,
		"Source": "127.0.80.80", "Resolver": "", "Backends": []map[string]string{
			{"Name": "stagedoor-1", "Addr": "127.0.0.1:8081"},
			{"Name": "stagedoor-2", "Addr": "127.0.0.1:8082"},
			{"Name": "stagedoor-3", "Addr": "127.0.0.1:8083"}}}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

// checkGenerated fails when the committed rendering of a template is not what
// the template and its data make now.
func checkGenerated(t *testing.T, committed string, rendered []byte) {
	t.Helper()
	have, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, rendered) {
		t.Errorf("%s is not what its template renders now: run go generate ./deploy", committed)
	}
}

func TestPrometheusConfig(t *testing.T) {
	promtool := need(t, "promtool", "prometheus")
	const tmpl = "../scripts/cluster/prometheus.yml.tmpl"

	local := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(local, render(t, tmpl, localPrometheusData(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, promtool, "check", "config", local)
	if !strings.Contains(out, "SUCCESS: 1 rule files found") {
		t.Errorf("promtool check config found no rule file:\n%s", out)
	}

	// docker compose's copy: committed as rendered, and valid once its rule file
	// (/etc/prometheus/alerts.yml in the container) is the one here.
	data := readJSON(t, "compose/prometheus.json")
	checkGenerated(t, "compose/prometheus.yml", render(t, tmpl, data))
	data["RuleFiles"] = localPrometheusData(t)["RuleFiles"]
	compose := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(compose, render(t, tmpl, data), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, promtool, "check", "config", compose)
}

func TestHAProxyConfig(t *testing.T) {
	haproxy := need(t, "haproxy", "haproxy")
	const tmpl = "../scripts/cluster/haproxy.cfg.tmpl"

	local := filepath.Join(t.TempDir(), "haproxy.cfg")
	cfg := render(t, tmpl, localHAProxyData())
	if err := os.WriteFile(local, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, haproxy, "-c", "-f", local)
	if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ALERT]") {
		t.Errorf("haproxy -c warns about the local cluster's configuration:\n%s", out)
	}
	for _, want := range []string{"option forwardfor", "option redispatch", "http-check send meth GET uri /healthz",
		"deny_status 429", "hdr Retry-After 1", "source 127.0.80.80",
		"server stagedoor-1 127.0.0.1:8081", "server stagedoor-3 127.0.0.1:8083"} {
		if !bytes.Contains(cfg, []byte(want)) {
			t.Errorf("the rendered configuration lacks %q", want)
		}
	}

	// docker compose's copy: the backends are names Docker resolves, so here
	// the only warnings allowed are that they do not resolve.
	data := readJSON(t, "compose/haproxy.json")
	rendered := render(t, tmpl, data)
	checkGenerated(t, "compose/haproxy.cfg", rendered)
	out = run(t, haproxy, "-c", "-f", "compose/haproxy.cfg")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "[ALERT]") || (strings.Contains(line, "[WARNING]") && !strings.Contains(line, "could not resolve address")) {
			t.Errorf("haproxy -c on compose/haproxy.cfg: %s", line)
		}
	}
}

// metricNames are the stagedoor_* names the Go sources (tests left out)
// register: every string literal of that shape.
var metricNames = sync.OnceValues(func() (map[string]bool, error) {
	literal := regexp.MustCompile(`"(stagedoor_[a-z0-9_]+)"`)
	names := map[string]bool{}
	for _, root := range []string{"../internal", "../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range literal.FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return names, nil
})

var metricRef = regexp.MustCompile(`\bstagedoor_[a-z0-9_]+`)

// unknownMetrics lists the stagedoor_* names expr uses that no Go source
// registers (a histogram's _bucket, _sum and _count count as its name).
func unknownMetrics(t *testing.T, expr string) []string {
	t.Helper()
	names, err := metricNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 5 {
		t.Fatalf("found only %d metric names in the Go sources: %v", len(names), names)
	}
	var unknown []string
	for _, ref := range metricRef.FindAllString(expr, -1) {
		base := ref
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if trimmed, ok := strings.CutSuffix(ref, suffix); ok && names[trimmed] {
				base = trimmed
			}
		}
		if !names[base] && !slices.Contains(unknown, ref) {
			unknown = append(unknown, ref)
		}
	}
	return unknown
}

func TestAlertRulesUseRealMetrics(t *testing.T) {
	raw, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	// Expressions and annotations alike: an annotation naming a metric is advice.
	if unknown := unknownMetrics(t, string(raw)); len(unknown) > 0 {
		t.Errorf("prometheus/alerts.yml uses metrics no Go source registers: %v", unknown)
	}
}

type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos *struct{ H, W, X, Y int } `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana/stagedoor.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("grafana/stagedoor.json is not a dashboard: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("the dashboard has no title or uid")
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want at least 36", d.SchemaVersion)
	}
	hasDatasource := false
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Name == "datasource" && v.Query == "prometheus" {
			hasDatasource = true
		}
	}
	if !hasDatasource {
		t.Errorf("the dashboard has no Prometheus datasource variable named datasource")
	}

	var all []panel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...) // the panels of a collapsed row
	}
	ids := map[int]bool{}
	var exprs []string
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q has no size (gridPos)", p.Title)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.Expr == "" || q.RefID == "" {
				t.Errorf("panel %q has a query without expr or refId", p.Title)
			}
			exprs = append(exprs, q.Expr)
			if unknown := unknownMetrics(t, q.Expr); len(unknown) > 0 {
				t.Errorf("panel %q uses metrics no Go source registers: %v", p.Title, unknown)
			}
		}
	}

	// Every query parses as PromQL: promtool checks them as recording rules,
	// with Grafana's variables given plain values.
	promtool := need(t, "promtool", "prometheus")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	vars := strings.NewReplacer("$__rate_interval", "1m", "$instance", ".*")
	for i, e := range exprs {
		quoted, _ := json.Marshal(vars.Replace(e)) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, quoted)
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, promtool, "check", "rules", file)
}

// The cluster's scripts pass shellcheck, where it is installed (it is not a
// requirement of make test).
func TestShellScripts(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not on PATH (Debian: shellcheck)")
	}
	scripts, err := filepath.Glob("../scripts/cluster/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in ../scripts/cluster: %v", err)
	}
	run(t, shellcheck, append([]string{"-x", "../scripts/ensure-ops.sh", "../scripts/ensure-mail.sh"}, scripts...)...)
}

// docker compose accepts docker-compose.yml, with and without the scale
// profile, where a compose is installed (it is not a requirement of make test).
func TestComposeFile(t *testing.T) {
	compose := []string{}
	if path, err := exec.LookPath("docker-compose"); err == nil {
		compose = []string{path}
	} else if docker, err := exec.LookPath("docker"); err == nil && exec.Command(docker, "compose", "version").Run() == nil {
		compose = []string{docker, "compose"}
	}
	if len(compose) == 0 {
		t.Skip("no docker-compose or docker compose here")
	}
	base := append(compose, "--project-directory", "..", "-f", "../docker-compose.yml")
	run(t, base[0], append(base[1:], "config", "-q")...)
	run(t, base[0], append(base[1:], "--profile", "scale", "config", "-q")...)
}
