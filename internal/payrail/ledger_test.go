package payrail

import (
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestARestartedPayrailKnowsItsCharges: a new Server on the same database
// replays the old one's charges and finds them by key.
func TestARestartedPayrailKnowsItsCharges(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	_, before, _ := startOn(t, db, Config{})
	first := mustPost(t, before, "order-1", chargeBody(TokenVisa))
	before.Close()

	after, ts, _ := startOn(t, db, Config{})
	var c Charge
	if g := get(t, ts, "/charges?idempotency_key=order-1", &c); g.status != 200 || c.ID != first.body.ID {
		t.Fatalf("after a restart: GET by key = %d %s, want %s", g.status, g.raw, first.body.ID)
	}
	if again := mustPost(t, ts, "order-1", chargeBody(TokenVisa)); again.body.ID != first.body.ID ||
		again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after a restart the same key = %d %s, want a replay of %s", again.status, again.raw, first.body.ID)
	}
	if n := len(charges(t, after)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
}

// TestRecordDelayHidesAChargeUntilRecordedAndSaysSo: while a charge waits to be
// recorded, a lookup by its key answers 404 with a complete_through before the
// charge was made (so the 404 proves nothing), its POST replays it at once, and
// once recorded it is found and listed.
func TestRecordDelayHidesAChargeUntilRecordedAndSaysSo(t *testing.T) {
	t.Parallel()
	const delay = 800 * time.Millisecond
	_, ts, _ := start(t, Config{RecordDelay: delay, Rand: func() float64 { return 0.999 }})
	made := mustPost(t, ts, "late", chargeBody(TokenVisa))
	if made.status != 201 {
		t.Fatalf("POST = %d %s", made.status, made.raw)
	}
	if recordedIn := made.body.RecordedAt.Sub(made.body.CreatedAt); recordedIn < delay*9/10 || recordedIn > delay {
		t.Errorf("recorded %s after it was made, want about %s", recordedIn, delay)
	}
	var missing struct {
		Error string
		Coverage
	}
	if g := get(t, ts, "/charges?idempotency_key=late", &missing); g.status != 404 {
		t.Fatalf("GET before it is recorded = %d %s, want 404", g.status, g.raw)
	}
	if !missing.CompleteThrough.Before(made.body.CreatedAt.Add(time.Millisecond)) || missing.Since.After(made.body.CreatedAt) {
		t.Errorf("404 coverage %+v: want complete_through no later than the charge (%s), since before it",
			missing.Coverage, made.body.CreatedAt)
	}
	if r := mustPost(t, ts, "late", chargeBody(TokenVisa)); r.header.Get("Idempotent-Replayed") != "true" || r.body.ID != made.body.ID {
		t.Errorf("a replay while unrecorded = %d %s", r.status, r.raw)
	}
	var list struct{ Charges []Charge }
	if get(t, ts, "/charges", &list); len(list.Charges) != 0 {
		t.Errorf("listed before it is recorded: %+v", list.Charges)
	}

	var found Charge
	testenv.Eventually(t, time.Until(made.body.RecordedAt)+5*time.Second, func() bool {
		return get(t, ts, "/charges?idempotency_key=late", &found).status == 200
	}, "the late charge to be recorded")
	if found.ID != made.body.ID || time.Now().Before(made.body.RecordedAt) {
		t.Errorf("GET once recorded = %+v, want %s, not before %s", found, made.body.ID, made.body.RecordedAt)
	}
	if get(t, ts, "/charges", &list); len(list.Charges) != 1 {
		t.Errorf("listed once recorded: %+v", list.Charges)
	}
	if g := get(t, ts, "/charges?idempotency_key=never", &missing); g.status != 404 ||
		missing.CompleteThrough.Before(made.body.RecordedAt) {
		t.Errorf("with nothing waiting, complete_through = %s, want about now", missing.CompleteThrough)
	}
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	s, ts, _ := start(t, Config{})
	paid := mustPost(t, ts, "paid", chargeBody(TokenVisa))
	declined := mustPost(t, ts, "declined", chargeBody(TokenDeclined))

	refund := func(id string) (response, Refund) { return refundWith(t, ts, id, "", "") }
	r1, first := refund(paid.body.ID)
	if r1.status != 201 || !strings.HasPrefix(first.ID, "re_") || first.ChargeID != paid.body.ID || first.AmountCents != 4200 {
		t.Fatalf("refund = %d %s", r1.status, r1.raw)
	}
	r2, second := refund(paid.body.ID)
	if r2.status != 200 || second.ID != first.ID || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("refund again = %d %s, want 200 with the same refund", r2.status, r2.raw)
	}
	if r, _ := refund(declined.body.ID); r.status != 409 {
		t.Errorf("refund of a decline = %d %s, want 409", r.status, r.raw)
	}
	if r, _ := refund("ch_nope"); r.status != 404 {
		t.Errorf("refund of an unknown charge = %d %s, want 404", r.status, r.raw)
	}
	var c Charge
	if get(t, ts, "/charges?idempotency_key=paid", &c); len(c.Refunds) != 1 || c.Refunds[0].ID != first.ID || c.RefundedCents != 4200 {
		t.Errorf("the charge does not show its refund: %+v", c)
	}
	if all := charges(t, s); len(all) != 2 {
		t.Errorf("%d charges, want 2: a refund is not a charge", len(all))
	}
}

// TestListPages: charges are listed in recording order, a page at a time.
func TestListPages(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{})
	for _, k := range []string{"a", "b", "c"} {
		mustPost(t, ts, k, chargeBody(TokenVisa))
	}
	var page struct{ Charges []Charge }
	get(t, ts, "/charges?limit=2", &page)
	if len(page.Charges) != 2 || page.Charges[0].IdempotencyKey != "a" || page.Charges[1].IdempotencyKey != "b" {
		t.Fatalf("first page %+v", page.Charges)
	}
	last := page.Charges[1]
	get(t, ts, "/charges?limit=2&recorded_after="+last.RecordedAt.Format(time.RFC3339Nano)+"&after_id="+last.ID, &page)
	if len(page.Charges) != 1 || page.Charges[0].IdempotencyKey != "c" {
		t.Errorf("second page %+v", page.Charges)
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "recorded_after=yesterday"} {
		if g := get(t, ts, "/charges?"+q, nil); g.status != 400 {
			t.Errorf("GET /charges?%s = %d, want 400", q, g.status)
		}
	}
}

// TestJitterAddsUpToItsAmount: latency 20 ms, jitter 100 ms, the roll at 0.5:
// each answer takes at least 70 ms.
func TestJitterAddsUpToItsAmount(t *testing.T) {
	t.Parallel()
	_, ts, _ := start(t, Config{Latency: 20 * time.Millisecond, LatencyJitter: 100 * time.Millisecond,
		Rand: func() float64 { return 0.5 }})
	began := time.Now()
	mustPost(t, ts, "j", chargeBody(TokenVisa))
	if took := time.Since(began); took < 70*time.Millisecond {
		t.Errorf("answered after %s, want at least 70ms", took)
	}
}

// TestALedgerFromBeforePartialRefundsKeepsItsRefunds: a ledger whose charges
// kept their one refund on their row (refund_id, refunded_at) is moved, at
// start, to refunds of their own: the charge shows it refunded in full, the
// refund keeps its id, and asking again without a key replays it.
func TestALedgerFromBeforePartialRefundsKeepsItsRefunds(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	if _, err := db.Exec(t.Context(), `
		CREATE SCHEMA payrail;
		CREATE TABLE payrail.ledger (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
		    started_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO payrail.ledger DEFAULT VALUES;
		CREATE TABLE payrail.charges (id text PRIMARY KEY, idempotency_key text NOT NULL UNIQUE,
		    status text NOT NULL CHECK (status IN ('succeeded', 'declined')), amount_cents bigint NOT NULL,
		    currency text NOT NULL, decline_reason text, created_at timestamptz NOT NULL DEFAULT now(),
		    recorded_at timestamptz NOT NULL, refund_id text UNIQUE, refunded_at timestamptz);
		INSERT INTO payrail.charges (id, idempotency_key, status, amount_cents, currency, recorded_at, refund_id, refunded_at)
		VALUES ('ch_old', 'old', 'succeeded', 4200, 'EUR', now(), 're_old', now()),
		       ('ch_kept', 'kept', 'succeeded', 100, 'EUR', now(), NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	_, ts, _ := startOn(t, db, Config{})
	var c Charge
	get(t, ts, "/charges?idempotency_key=old", &c)
	if c.RefundedCents != 4200 || len(c.Refunds) != 1 || c.Refunds[0].ID != "re_old" || c.Refunds[0].AmountCents != 4200 {
		t.Fatalf("the old charge = %+v, want refunded in full by re_old", c)
	}
	if r, again := refundWith(t, ts, "ch_old", "", ""); r.status != 200 || again.ID != "re_old" {
		t.Errorf("its refund asked again = %d %s, want re_old replayed", r.status, r.raw)
	}
	if r, _ := refundWith(t, ts, "ch_kept", "k", `{"amount_cents":40}`); r.status != 201 {
		t.Errorf("a refund of a charge of the old ledger = %d %s, want 201", r.status, r.raw)
	}
}
