package testenv

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address ("127.0.0.1:port") nothing listens on now,
// for a program the test starts that must be told its port.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
