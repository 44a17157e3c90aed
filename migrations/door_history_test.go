package migrations_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/migrations"
)

// TestDoorHistoryRepairsOneAdmissionPerTicket: migration 10 finds the audit as
// older versions left it (a displaced admission still 'admitted', and a copy
// of one of a ticket's admitted rows, sometimes the wrong one, inserted as a
// conflict) and leaves each ticket one admitted row, the one at its
// scanned_at, every other admission a conflict, and no copies; then its
// unique index holds.
func TestDoorHistoryRepairsOneAdmissionPerTicket(t *testing.T) {
	t.Parallel()
	url := testenv.EmptyDatabaseURL(t)
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := migrations.UpTo(ctx, url, 9, logger); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// An organizer's event of three seats, sold to a buyer: tickets t1, t2, t3.
	exec(`INSERT INTO accounts (id, kind, email, name, password_hash) VALUES
		('00000000-0000-0000-0000-0000000000a1', 'organizer', 'o@example.com', 'O', 'x'),
		('00000000-0000-0000-0000-0000000000b1', 'buyer', 'b@example.com', 'B', 'x')`)
	exec(`INSERT INTO events (id, organizer_id, name, venue, starts_at, on_sale_at, currency) VALUES
		('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000a1', 'E', 'V', now() + interval '1 day', now(), 'USD')`)
	exec(`INSERT INTO holds (id, event_id, buyer_id, seat_ids, status, total_cents, currency, expires_at) VALUES
		('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000b1',
		 ARRAY['00000000-0000-0000-0000-000000000051'::uuid], 'converted', 0, 'USD', now())`)
	exec(`INSERT INTO orders (id, buyer_id, hold_id, event_id, status, total_cents, currency, charge_id, charge_deadline) VALUES
		('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-0000000000c1',
		 '00000000-0000-0000-0000-0000000000e1', 'confirmed', 0, 'USD', 'ch_1', now())`)
	exec(`INSERT INTO scanner_keys (id, organizer_id, label, key_hash) VALUES
		('00000000-0000-0000-0000-0000000000f1', '00000000-0000-0000-0000-0000000000a1', 'North', '\x01'),
		('00000000-0000-0000-0000-0000000000f2', '00000000-0000-0000-0000-0000000000a1', 'South', '\x02'),
		('00000000-0000-0000-0000-0000000000f3', '00000000-0000-0000-0000-0000000000a1', 'West', '\x03')`)
	for i := 1; i <= 3; i++ {
		exec(fmt.Sprintf(`INSERT INTO seats (id, event_id, position, section, row_label, number, price_cents)
			VALUES ('00000000-0000-0000-0000-00000000005%d', '00000000-0000-0000-0000-0000000000e1', %d, 'S', 'A', %d, 0)`, i, i, i))
		exec(fmt.Sprintf(`INSERT INTO tickets (id, order_id, buyer_id, event_id, seat_id, code)
			VALUES ('00000000-0000-0000-0000-00000000001%d', '00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000b1',
			        '00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-00000000005%d', 'CODE%d')`, i, i, i))
	}
	scan := func(key, ticket, result, at string, device *string, offline bool) {
		t.Helper()
		exec(`INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result, scanned_at, device_scan_id, offline)
			VALUES ($1, '00000000-0000-0000-0000-0000000000e1', $2, '\x00', 'CODE', $3, $4::timestamptz, $5, $6)`,
			key, ticket, result, at, device, offline)
	}
	dev := func(s string) *string { return &s }
	const north, south, west = "00000000-0000-0000-0000-0000000000f1", "00000000-0000-0000-0000-0000000000f2", "00000000-0000-0000-0000-0000000000f3"
	const t1, t2, t3 = "00000000-0000-0000-0000-000000000011", "00000000-0000-0000-0000-000000000012", "00000000-0000-0000-0000-000000000013"
	// t1: admitted online at 20:00, then by an upload dated 19:00 (which
	// displaced it), then by one dated 18:00: three admitted rows, and two
	// copies as conflicts, both of the 20:00 row (the wrong one the second time).
	scan(north, t1, "admitted", "2030-09-01 20:00Z", nil, false)
	scan(south, t1, "admitted", "2030-09-01 19:00Z", dev("s1"), true)
	scan(north, t1, "conflict", "2030-09-01 20:00Z", nil, false)
	scan(west, t1, "admitted", "2030-09-01 18:00Z", dev("w1"), true)
	scan(north, t1, "conflict", "2030-09-01 20:00Z", nil, false)
	// t2: one admission and a real uploaded conflict; t3: never scanned.
	scan(north, t2, "admitted", "2030-09-01 19:30Z", nil, false)
	scan(south, t2, "conflict", "2030-09-01 19:45Z", dev("s2"), true)
	exec(`UPDATE tickets SET scanned_at = '2030-09-01 18:00Z' WHERE id = $1`, t1)
	exec(`UPDATE tickets SET scanned_at = '2030-09-01 19:30Z' WHERE id = $1`, t2)

	if applied, err := migrations.Up(ctx, url, logger); err != nil || len(applied) == 0 || applied[0] != 10 {
		t.Fatalf("migrating on from 9 applied %v (%v)", applied, err)
	}
	rows, err := conn.Query(ctx, `SELECT ticket_id::text, scanner_key_id::text, result FROM scans ORDER BY ticket_id, scanned_at`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Ticket, Key, Result string }])
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ Ticket, Key, Result string }{
		{t1, west, "admitted"}, {t1, south, "conflict"}, {t1, north, "conflict"},
		{t2, north, "admitted"}, {t2, south, "conflict"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the audit after the migration, by ticket and time:\n got  %v\n want %v", got, want)
	}
	_, err = conn.Exec(ctx, `INSERT INTO scans (scanner_key_id, event_id, ticket_id, code_hash, code_prefix, result)
		VALUES ($1, '00000000-0000-0000-0000-0000000000e1', $2, '\x00', 'CODE', 'admitted')`, south, t1)
	if err == nil {
		t.Error("a second admitted row of a ticket was accepted")
	}
}
