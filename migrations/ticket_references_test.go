package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stagedoor/stagedoor/internal/testenv"
	"github.com/stagedoor/stagedoor/migrations"
)

// TestTicketReferencesAreBackfilled: migration 21 gives each of the tickets
// issued before it (500 here) a reference of 10 Crockford base32 characters,
// all different; then the column refuses none, one of another alphabet, and
// one another ticket has.
func TestTicketReferencesAreBackfilled(t *testing.T) {
	t.Parallel()
	url := testenv.EmptyDatabaseURL(t)
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := migrations.UpTo(ctx, url, 20, logger); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) error {
		t.Helper()
		_, err := conn.Exec(ctx, q, args...)
		return err
	}
	must := func(q string, args ...any) {
		t.Helper()
		if err := exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(`INSERT INTO accounts (id, kind, email, name, password_hash) VALUES
		('00000000-0000-0000-0000-0000000000a1', 'organizer', 'o@example.com', 'O', 'x'),
		('00000000-0000-0000-0000-0000000000b1', 'buyer', 'b@example.com', 'B', 'x')`)
	must(`INSERT INTO events (id, organizer_id, name, venue, starts_at, on_sale_at, currency) VALUES
		('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000a1', 'E', 'V', now() + interval '1 day', now(), 'USD')`)
	must(`INSERT INTO seats (id, event_id, position, section, row_label, number, price_cents)
		SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid, '00000000-0000-0000-0000-0000000000e1', n, 'S', 'A', n, 0
		FROM generate_series(1, 500) n`)
	must(`INSERT INTO holds (id, event_id, buyer_id, seat_ids, status, total_cents, currency, expires_at) VALUES
		('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000b1',
		 ARRAY['00000000-0000-0000-0000-000000000001'::uuid], 'converted', 0, 'USD', now())`)
	must(`INSERT INTO orders (id, buyer_id, hold_id, event_id, status, total_cents, currency, charge_id, charge_deadline) VALUES
		('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-0000000000c1',
		 '00000000-0000-0000-0000-0000000000e1', 'confirmed', 0, 'USD', 'ch_1', now())`)
	must(`INSERT INTO tickets (id, order_id, buyer_id, event_id, seat_id, code)
		SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000b1',
		       '00000000-0000-0000-0000-0000000000e1', ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid, 'CODE' || n
		FROM generate_series(1, 500) n`)

	if _, err := migrations.UpTo(ctx, url, 21, logger); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT reference FROM tickets`)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	format := regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{10}$`)
	seen := map[string]bool{}
	chars := map[rune]bool{}
	for _, r := range refs {
		if !format.MatchString(r) {
			t.Errorf("backfilled reference %q", r)
		}
		seen[r] = true
		for _, c := range r {
			chars[c] = true
		}
	}
	if len(refs) != 500 || len(seen) != 500 {
		t.Errorf("500 tickets have %d references, %d different; want 500 of each", len(refs), len(seen))
	}
	if len(chars) != 32 {
		t.Errorf("5,000 backfilled characters use %d of the alphabet's 32", len(chars))
	}
	for what, q := range map[string]string{
		"none":             `UPDATE tickets SET reference = NULL WHERE seat_id = '00000000-0000-0000-0000-000000000001'`,
		"an I":             `UPDATE tickets SET reference = 'IIIIIIIIII' WHERE seat_id = '00000000-0000-0000-0000-000000000001'`,
		"another's":        `UPDATE tickets SET reference = '` + refs[1] + `' WHERE reference = '` + refs[0] + `'`,
		"nine characters":  `UPDATE tickets SET reference = '123456789' WHERE seat_id = '00000000-0000-0000-0000-000000000001'`,
		"lower case (7kq)": `UPDATE tickets SET reference = '7kq40m2x9p' WHERE seat_id = '00000000-0000-0000-0000-000000000001'`,
	} {
		if err := exec(q); err == nil {
			t.Errorf("a ticket took %s as its reference", what)
		}
	}
}
