package testenv

import (
	"os"
	"os/exec"
	"sync"
	"testing"
)

// debianTool is a program a test needs that Debian packages: where to look for
// it, and which package installs it.
type debianTool struct {
	// Package is the Debian package that installs the program.
	Package string
	// Candidates are the names or paths tried, in order.
	Candidates []string
	// Works, when set, must accept a candidate before it is used.
	Works func(path string) bool

	once sync.Once
	out  []byte
	err  error
}

// find returns the first candidate on the machine that works, or "".
func (d *debianTool) find() string {
	for _, p := range d.Candidates {
		if path, err := exec.LookPath(p); err == nil && (d.Works == nil || d.Works(path)) {
			return path
		}
	}
	return ""
}

// lookOrInstall finds the program, installing its package first where it can
// (as root, with apt-get; once per test binary). It returns "" and what apt-get
// said when the program is still missing.
func (d *debianTool) lookOrInstall() (path string, why string) {
	if path := d.find(); path != "" {
		return path, ""
	}
	if _, aptErr := exec.LookPath("apt-get"); os.Geteuid() == 0 && aptErr == nil {
		d.once.Do(func() {
			cmd := exec.Command("bash", "-c", "apt-get update -qq && apt-get install -y -qq --no-install-recommends "+d.Package)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			d.out, d.err = cmd.CombinedOutput()
		})
		if path := d.find(); path != "" {
			return path, ""
		}
		return "", string(d.out)
	}
	return "", "not root, or no apt-get"
}

// need is the program's path (lookOrInstall). When it is still missing, it
// ends the test with missing (t.Skipf or t.Fatalf) and format, given why.
func (d *debianTool) need(t testing.TB, missing func(format string, args ...any), format string) string {
	t.Helper()
	path, why := d.lookOrInstall()
	if path == "" {
		missing(format, why)
	}
	return path
}
