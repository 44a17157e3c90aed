package deploy

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestPgBouncerConfig: PgBouncer starts with the configuration make cluster
// renders and listens where it says (pgbouncer has no check mode: a bad key
// or value stops it at start), the pooling is per transaction, and docker
// compose's copy is the template's rendering of its data.
func TestPgBouncerConfig(t *testing.T) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = need(t, "/usr/sbin/pgbouncer", "pgbouncer")
	}
	const tmpl = "../scripts/cluster/pgbouncer.ini.tmpl"
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	users := filepath.Join(dir, "userlist.txt")
	if err := os.WriteFile(users, []byte(`"stagedoor" "secret"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := render(t, tmpl, map[string]any{"ListenAddr": "127.0.0.1", "ListenPort": port, "Database": "stagedoor",
		"ServerHost": "127.0.0.1", "ServerPort": 5432, "ServerUser": "stagedoor", "ServerPassword": "secret",
		"AuthType": "md5", "AuthFile": users, "PoolSize": 20, "MaxClientConn": 1000})
	for _, want := range []string{"pool_mode = transaction", "default_pool_size = 20",
		"stagedoor = host=127.0.0.1 port=5432 dbname=stagedoor user=stagedoor password='secret'"} {
		if !bytes.Contains(cfg, []byte(want)) {
			t.Errorf("the rendered configuration lacks %q", want)
		}
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{ini}
	if os.Geteuid() == 0 {
		args = []string{"-u", "nobody", ini} // it refuses root, as make cluster knows
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	listening := testenv.Poll(10*time.Second, 20*time.Millisecond, func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("pgbouncer stopped at start (%v):\n%s", err, &logs)
		default:
		}
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if !listening {
		t.Fatalf("pgbouncer does not listen on 127.0.0.1:%d:\n%s", port, &logs)
	}

	checkGenerated(t, "compose/pgbouncer.ini", render(t, tmpl, readJSON(t, "compose/pgbouncer.json")))
}
