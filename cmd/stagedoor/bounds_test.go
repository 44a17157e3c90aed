package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// serverAddrs reads the program's JSON log until it says where it serves the
// API ("listening") and the metrics ("serving metrics"), and goes on reading
// it: the load shedder's lines go to lines.
func serverAddrs(t *testing.T, log io.Reader, lines chan<- string) (api, metrics string) {
	t.Helper()
	type found struct{ msg, addr string }
	addrs := make(chan found, 2)
	go func() {
		scanner := bufio.NewScanner(log)
		for scanner.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(scanner.Bytes(), &line) == nil && (line.Msg == "listening" || line.Msg == "serving metrics") {
				addrs <- found{line.Msg, line.Addr}
			}
			if strings.Contains(scanner.Text(), "load shedder") {
				select {
				case lines <- scanner.Text():
				default: // more than anyone will read
				}
			}
		}
	}()
	deadline := time.After(30 * time.Second)
	for api == "" || metrics == "" {
		select {
		case f := <-addrs:
			if f.msg == "listening" {
				api = "http://" + f.addr
			} else {
				metrics = "http://" + f.addr
			}
		case <-deadline:
			t.Fatal("the program did not say where it serves within 30 s")
		}
	}
	return api, metrics
}

// floodRun is what testdata/flood saw.
type floodRun struct {
	Loads    int              `json:"loads"`
	Refused  int              `json:"refused"`
	Statuses map[int]int      `json:"statuses"`
	Flooded  map[string]int64 `json:"flooded"`
	Error    string           `json:"error"`
}

// flood runs testdata/flood (bin): pages loaded from base for d while 8
// clients each read every one of urls.
func flood(t *testing.T, bin, base string, d time.Duration, urls ...string) floodRun {
	t.Helper()
	cmd := exec.Command(bin, "-base", base, "-for", d.String(), "-clients", "8", "-flood", strings.Join(urls, ","))
	// The clients stand for machines of their own: here they share the
	// program's CPUs, so they get one at most, and give way to the program.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("flood: %v", err)
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 19)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("flood: %v", err)
	}
	out := stdout.Bytes()
	var run floodRun
	if err := json.Unmarshal(out, &run); err != nil || run.Error != "" || run.Loads == 0 {
		t.Fatalf("flood: %s (%v)", out, err)
	}
	return run
}

// TestAFloodOfProbesAndScrapesShedsNoPage: the whole program, with the worker
// utilization shedder on. /metrics is not on the public listener (404) but on
// the metrics listener. Then 8 clients each, in tight loops, read /metrics on
// the metrics listener, /readyz, /healthz and /metrics on the public one,
// while pages load: none is shed. (Before: 8 clients reading /metrics had the
// shedder refuse most page loads, and /readyz took a database connection each.)
//
// The program is built without the race detector for this test: the question
// is what the flood costs the program, and the detector's own cost (several
// times the CPU of every request) would answer another one.
func TestAFloodOfProbesAndScrapesShedsNoPage(t *testing.T) {
	// Not parallel: the shedder watches this machine's CPU too.
	env := testEnv(t)
	env["STAGEDOOR_WORKER_UTILIZATION"] = "enforce"
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir, ".", "./testdata/flood").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(dir, "stagedoor"), "serve")
	cmd.Env = os.Environ()
	stderr := startCmd(t, cmd, env, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1000)
	api, metrics := serverAddrs(t, stderr, lines)
	waitHealthy(t, api)

	resp, err := http.Get(api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET /metrics on the API = %d, want 404: the metrics have a listener of their own", resp.StatusCode)
	}
	resp, err = http.Get(metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(text), "stagedoor_http_requests_total") {
		t.Fatalf("GET /metrics on the metrics listener = %d %.200s", resp.StatusCode, text)
	}

	// A flood between two calm runs: a machine so busy that pages are shed
	// without any flood (the shedder watches the whole machine's scheduling
	// delay, and other packages' tests run beside this one) cannot tell
	// anything about the flood, so a round with a calm run that sheds is
	// tried again, up to three rounds.
	floodBin := filepath.Join(dir, "flood")
	for round := 1; round <= 3; round++ {
		if calm := flood(t, floodBin, api, 2*time.Second); calm.Refused > 0 {
			t.Logf("round %d: before the flood, %d of %d page loads were refused (%v): the machine is busy", round, calm.Refused, calm.Loads, calm.Statuses)
			continue
		}
		run := flood(t, floodBin, api, 4*time.Second, metrics+"/metrics", api+"/readyz", api+"/healthz", api+"/metrics")
		if calm := flood(t, floodBin, api, 2*time.Second); calm.Refused > 0 {
			t.Logf("round %d: after the flood, %d of %d page loads were refused (%v): the machine is busy", round, calm.Refused, calm.Loads, calm.Statuses)
			continue
		}
		t.Logf("during the flood (answers: %v): %d page loads, %v", run.Flooded, run.Loads, run.Statuses)
		if run.Refused > 0 {
			t.Errorf("%d of %d page loads were refused during the flood (%v), none before or after it; the shedder said:\n%s", run.Refused, run.Loads, run.Statuses, shedderLines(lines))
		}
		return
	}
	t.Fatalf("in three rounds, pages were shed without a flood too (a busy machine, or shedding the flood began that outlasted it); the shedder said:\n%s", shedderLines(lines))
}

// shedderLines are the shedder's log lines among those read so far.
func shedderLines(lines <-chan string) string {
	var out []string
	for {
		select {
		case l := <-lines:
			out = append(out, l)
		default:
			return strings.Join(out, "\n")
		}
	}
}

// TestServeBoundsItsConnections: serve puts its listener under
// STAGEDOOR_MAX_CONNECTIONS: with two connections open and a bound of two,
// a third is answered 503 at once and closed.
// scrapeText is the metrics page at url, "" when it cannot be read.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestServeBoundsItsConnections(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["STAGEDOOR_MAX_CONNECTIONS"], env["STAGEDOOR_MAX_STREAMS"] = "2", "1"
	_, stderr := startProgram(t, env, "serve")
	base, metricsURL := serverAddrs(t, stderr, nil)
	addr := strings.TrimPrefix(base, "http://")
	request := func(conn net.Conn) *http.Response {
		t.Helper()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: stagedoor\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	waitHealthy(t, base)
	http.DefaultClient.CloseIdleConnections() // its connection must not count
	// The server counts a connection closed once it reads the close, a moment
	// after the client's: until then it holds one of the two.
	testenv.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(scrapeText(t, metricsURL), "\nstagedoor_http_connections 0\n")
	}, "the health check's connection closed on the server")
	for i := range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if resp := request(conn); resp.StatusCode != 200 {
			t.Fatalf("connection %d = %d", i+1, resp.StatusCode)
		}
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp := request(conn); resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("the third connection = %d, Retry-After %q; want 503, Retry-After: 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
