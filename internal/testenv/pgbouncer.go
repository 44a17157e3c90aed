package testenv

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PgBouncerPool is the private PgBouncer's default_pool_size: the server
// connections it keeps for the database. Few, so that the transactions of
// every client, of several instances, really share them.
const PgBouncerPool = 3

// PgBouncer is a pgbouncer process of one test's own (Debian's pgbouncer) in
// transaction pooling mode, in front of one database of the test's PostgreSQL.
type PgBouncer struct {
	// URL is the database through PgBouncer: a DATABASE_URL.
	URL string
	// Direct is the database on PostgreSQL itself, as StartPgBouncer was given it.
	Direct string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	logs   *LogBuffer
}

// StartPgBouncer starts pgbouncer on a free port of 127.0.0.1 with
// pool_mode=transaction and PgBouncerPool server connections, in front of the
// database of databaseURL, waits until it answers, and kills it (its pid) when
// the test ends. Clients log in as the URL's user, any password (auth_type
// trust: it listens on 127.0.0.1 only, for one test); PgBouncer logs in to
// PostgreSQL with the URL's user and password. Run as root, it runs as nobody
// (pgbouncer refuses root).
//
// pgbouncer is looked for on PATH and in /usr/sbin, where Debian puts it. When
// it is missing, it is installed with apt-get if this runs as root (as
// scripts/ensure-ops.sh, which make test runs, would have); otherwise the test
// is skipped, saying what to install.
func StartPgBouncer(t testing.TB, databaseURL string) *PgBouncer {
	t.Helper()
	bin := pgbouncerBinary(t)
	server, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("testenv: pgbouncer: %v", err)
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "userlist.txt")
	if err := os.WriteFile(users, fmt.Appendf(nil, "%q \"\"\n", server.User), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &PgBouncer{Direct: databaseURL}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() && b.logs != nil {
			t.Logf("testenv: the private pgbouncer's log:\n%s", b.logs)
		}
	})
	// A port found free may be taken before pgbouncer binds it: a pgbouncer
	// that does not come up is started again on another.
	for attempt := 1; ; attempt++ {
		port := FreePort(t)
		ini := filepath.Join(dir, "pgbouncer.ini")
		if err := os.WriteFile(ini, []byte(pgbouncerINI(t, server, port, users)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{ini}
		if os.Geteuid() == 0 {
			if _, err := user.Lookup("nobody"); err != nil {
				t.Fatalf("testenv: pgbouncer refuses to run as root, and there is no user nobody to run it as: %v", err)
			}
			args = []string{"-u", "nobody", ini}
		}
		b.logs = &LogBuffer{}
		b.cmd = exec.Command(bin, args...)
		b.cmd.Stdout, b.cmd.Stderr = b.logs, b.logs
		if err := b.cmd.Start(); err != nil {
			t.Fatalf("testenv: start pgbouncer: %v", err)
		}
		b.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) {
			_ = cmd.Wait()
			close(exited)
		}(b.cmd, b.exited)
		u := url.URL{Scheme: "postgres", User: url.User(server.User), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Path: "/" + server.Database, RawQuery: "sslmode=disable"}
		b.URL = u.String()
		if b.answers(10 * time.Second) {
			break
		}
		b.Stop()
		if attempt == 3 {
			t.Fatalf("testenv: pgbouncer on 127.0.0.1:%d did not answer (attempt %d):\n%s", port, attempt, b.logs)
		}
	}
	return b
}

// pgbouncerINI is the private pgbouncer's configuration: the one database,
// under its own name, on the server of cfg, its server connections used in
// turn (server_round_robin), so that one client's consecutive transactions
// run on different ones, as under load.
func pgbouncerINI(t testing.TB, cfg *pgconn.Config, port int, users string) string {
	t.Helper()
	conninfo := []string{"host=" + quoteINI(t, cfg.Host), "port=" + strconv.Itoa(int(cfg.Port)),
		"dbname=" + quoteINI(t, cfg.Database), "user=" + quoteINI(t, cfg.User)}
	if cfg.Password != "" {
		conninfo = append(conninfo, "password="+quoteINI(t, cfg.Password))
	}
	return fmt.Sprintf(`[databases]
%s = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 1000
log_connections = 0
log_disconnections = 0
; Server connections in turn, not the last used first: one client's
; consecutive transactions run on different ones.
server_round_robin = 1
`, cfg.Database, strings.Join(conninfo, " "), port, users, PgBouncerPool)
}

// quoteINI quotes a value of pgbouncer's connection strings; one with a quote
// or a backslash is not needed by any test.
func quoteINI(t testing.TB, v string) string {
	t.Helper()
	if strings.ContainsAny(v, `'\`) || v == "" || strings.ContainsAny(v, "\n\r") {
		t.Fatalf("testenv: pgbouncer: cannot write %q into its configuration", v)
	}
	return "'" + v + "'"
}

// answers reports whether PgBouncer answers a query within within; false as
// soon as its process has exited.
func (b *PgBouncer) answers(within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-b.exited:
			return false
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, b.URL)
		if err == nil {
			_, err = c.Exec(ctx, "SELECT 1")
			c.Close(ctx)
		}
		cancel()
		if err == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// Stop kills pgbouncer and waits for it to exit; calling it twice is harmless.
func (b *PgBouncer) Stop() {
	if b.exited == nil {
		return
	}
	select {
	case <-b.exited:
	default:
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

var pgbouncerTool = &debianTool{Package: "pgbouncer", Candidates: []string{"pgbouncer", "/usr/sbin/pgbouncer"}}

// pgbouncerBinary finds pgbouncer, installing it first where it can.
func pgbouncerBinary(t testing.TB) string {
	t.Helper()
	return pgbouncerTool.need(t, t.Skipf, "testenv: pgbouncer is not installed and could not be installed here (%s): "+
		"install Debian's pgbouncer (bash scripts/ensure-ops.sh does, as root; make test runs it)")
}
