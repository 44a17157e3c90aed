package testenv

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Monitor counts the commands a Redis server runs, as MONITOR shows them:
// those its clients sent (EVALSHA, ZREM, …), apart from those its scripts
// ran inside them, which it does not count. Use it on a PrivateRedis, whose
// commands are the test's alone.
type Monitor struct {
	addr string
	conn net.Conn
	mu   sync.Mutex
	sent []Command
	done chan struct{}
}

// Command is one command a client sent: its name in lower case and its
// arguments as MONITOR quotes them (a script's SHA, its number of keys, its
// keys, …).
type Command struct {
	Name string
	Args []string
}

// Key is the command's first key: the first argument, or for EVAL and
// EVALSHA the first after the script and the number of keys ("" when none).
func (c Command) Key() string {
	i := 0
	if c.Name == "eval" || c.Name == "evalsha" {
		i = 2
	}
	if i >= len(c.Args) {
		return ""
	}
	return c.Args[i]
}

// StartMonitor sends MONITOR to the Redis at addr and counts from then on,
// until the test ends.
func StartMonitor(t testing.TB, addr string) *Monitor {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("testenv: monitor %s: %v", addr, err)
	}
	if _, err := c.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatalf("testenv: monitor %s: %v", addr, err)
	}
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("testenv: monitor %s: %q, %v", addr, line, err)
	}
	m := &Monitor{addr: addr, conn: c, done: make(chan struct{})}
	go m.read(r)
	t.Cleanup(func() {
		c.Close()
		<-m.done
	})
	return m
}

// read counts each line: +1701451234.567890 [0 127.0.0.1:5678] "evalsha" "…" …,
// where a script's own commands say [0 lua].
func (m *Monitor) read(r *bufio.Reader) {
	defer close(m.done)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		open, end := strings.IndexByte(line, '['), strings.IndexByte(line, ']')
		if open < 0 || end < open || strings.HasSuffix(line[open:end], " lua") {
			continue
		}
		rest := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line[end+1:]), `"`), `"`)
		words := strings.Split(rest, `" "`)
		cmd := Command{Name: strings.ToLower(words[0]), Args: words[1:]}
		m.mu.Lock()
		m.sent = append(m.sent, cmd)
		m.mu.Unlock()
	}
}

// Sent returns the commands sent since the monitor started, in the order
// Redis ran them.
func (m *Monitor) Sent() []Command {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Command(nil), m.sent...)
}

// Sync returns once the monitor has seen every command Redis ran before it
// was called: it sends ECHO with a mark of its own on a connection of its own
// (no handshake) and waits for the monitor to show it, which MONITOR does in
// the order Redis runs commands. The ECHO is in Sent; leave it out.
func (m *Monitor) Sync(t testing.TB) {
	t.Helper()
	mark := "sync-" + randomHex(8)
	c, err := net.DialTimeout("tcp", m.addr, 5*time.Second)
	if err != nil {
		t.Fatalf("testenv: monitor sync: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ECHO " + mark + "\r\n")); err != nil {
		t.Fatalf("testenv: monitor sync: %v", err)
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatalf("testenv: monitor sync: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, cmd := range m.Sent() {
			if cmd.Name == "echo" && len(cmd.Args) == 1 && cmd.Args[0] == mark {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: the monitor did not show %s within 10 s", mark)
		}
		time.Sleep(time.Millisecond)
	}
}
