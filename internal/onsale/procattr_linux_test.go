package onsale_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process get SIGKILL when the test binary dies, so
// that a test killed by its timeout (whose cleanups never run) leaves no
// process of its own behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
