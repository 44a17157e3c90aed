package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TerminateConnections ends every connection to db's database but the one it
// uses itself, as an operator's pg_terminate_backend or a failover would, and
// returns how many it ended. The pool's connections are dead from then on,
// though the pool does not know it until it uses them.
func TerminateConnections(t testing.TB, db *pgxpool.Pool) int {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, db.Config().ConnString())
	if err != nil {
		t.Fatalf("testenv: terminate connections: %v", err)
	}
	defer admin.Close(ctx)
	var n int
	if err := admin.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatalf("testenv: terminate connections: %v", err)
	}
	return n
}

// LogBuffer collects what a logger writes, safe for the logger and the test to
// share.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the JSON lines written so far, decoded, failing the test on a
// line that is not JSON.
func (b *LogBuffer) Lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader([]byte(b.String())))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}
