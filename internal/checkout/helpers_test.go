package checkout

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// setup says how a world is made; zero fields get the defaults of newWorld.
type setup struct {
	stub         payrail.Config
	holdTTL      time.Duration // default 10 minutes
	timeout      time.Duration // the payment deadline; default 5 s
	recoverAfter time.Duration // default 1 minute
	// freshLedger keeps Payrail's ledger as new as the world; otherwise it has
	// been recording for a day, so that orders aged by a test are covered.
	freshLedger bool
	cooldown    time.Duration // the payment breaker's; default PaymentRetryAfter
	volume      int           // the payment breaker's buyers; default DefaultBreakerBuyers
	seats       int           // the event's seats, at 2500 each; default 10
}

// world is a database with a buyer, an on-sale event of 10 seats whose
// buyers may ask for refunds for 12 hours, a hold service, a Payrail stub
// whose ledger is in the same database (served on a killable server, behind a
// gate that can slow its refunds' answers), and a checkout service charging
// through it.
type world struct {
	db       *pgxpool.Pool
	buyer    string
	event    event.Event
	events   *event.Service
	holds    *hold.Service
	payrail  *payrail.Server
	stub     *testenv.KillableServer
	gate     *gate
	checkout *Service
	// till is another instance with the default payment deadline, through
	// which buy makes the orders a test starts from: a test's short deadline
	// is for the faults it makes, and on a busy machine a charge can outlast it.
	till *Service
	logs *testenv.LogBuffer
}

func newWorld(t *testing.T, s setup) *world {
	t.Helper()
	ctx := context.Background()
	if s.holdTTL == 0 {
		s.holdTTL = 10 * time.Minute
	}
	if s.recoverAfter == 0 {
		s.recoverAfter = time.Minute
	}
	w := &world{db: testenv.Postgres(t), logs: &testenv.LogBuffer{}}
	accounts := auth.NewService(w.db, 4)
	org, err := accounts.Register(ctx, auth.Organizer, "org-"+ids.New()+"@example.com", "correct horse", "Org")
	if err != nil {
		t.Fatal(err)
	}
	w.buyer = w.newBuyer(t)
	if s.seats == 0 {
		s.seats = 10
	}
	w.events = event.NewService(w.db, hold.CreateSeats)
	refundsUntil := time.Now().Add(12 * time.Hour)
	w.event, err = w.events.Create(ctx, event.Draft{
		OrganizerID: org.ID, Name: "Night", Venue: "Hall", StartsAt: time.Now().Add(24 * time.Hour),
		RefundsUntil: &refundsUntil,
		Sections:     []event.Section{{Name: "Floor", Rows: 1, SeatsPerRow: s.seats, PriceCents: 2500}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.holds = hold.NewService(w.db, w.events, s.holdTTL, 10)
	w.payrail, err = payrail.Open(ctx, w.db, s.stub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.freshLedger {
		if _, err := w.db.Exec(ctx, `UPDATE payrail.ledger SET started_at = now() - interval '1 day'`); err != nil {
			t.Fatal(err)
		}
	}
	w.gate = &gate{next: w.payrail}
	w.stub = testenv.NewKillableServer(t, w.gate)
	w.checkout = w.newService(w.stub.URL(), s)
	till := s
	till.timeout = 0
	w.till = w.newService(w.stub.URL(), till)
	return w
}

// newService is another instance's checkout service on the world's database.
func (w *world) newService(payrailURL string, s setup) *Service {
	if s.recoverAfter == 0 {
		s.recoverAfter = time.Minute
	}
	logger := slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return NewService(w.db, NewPayments(PaymentsOptions{BaseURL: payrailURL, Timeout: s.timeout,
		BreakerCooldown: s.cooldown, BreakerBuyers: s.volume}),
		Options{RecoverAfter: s.recoverAfter, Logger: logger, Events: w.events})
}

func (w *world) newBuyer(t *testing.T) string {
	t.Helper()
	b, err := auth.NewService(w.db, 4).Register(context.Background(), auth.Buyer,
		"buyer-"+ids.New()+"@example.com", "correct horse", "Buyer")
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

func (w *world) hold(t *testing.T, seats ...int) hold.Hold {
	t.Helper()
	return w.holdFor(t, w.buyer, seats...)
}

func (w *world) holdFor(t *testing.T, buyer string, seats ...int) hold.Hold {
	t.Helper()
	h, err := w.tryHold(buyer, w.seatIDs(t, seats...))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (w *world) seatIDs(t *testing.T, seats ...int) []string {
	t.Helper()
	m, err := w.events.SeatMap(context.Background(), w.event.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range seats {
		out = append(out, m.Seats[i].ID)
	}
	return out
}

func (w *world) tryHold(buyer string, seatIDs []string) (hold.Hold, error) {
	ctx := context.Background()
	plan, err := w.holds.Plan(ctx, buyer, w.event.ID, seatIDs)
	if err != nil {
		return hold.Hold{}, err
	}
	return w.holds.Place(ctx, plan)
}

// pay checks out the hold with token and an optional Idempotency-Key.
func (w *world) pay(h hold.Hold, token, key string) (Result, error) {
	return w.checkout.Checkout(context.Background(), Request{BuyerID: h.BuyerID, HoldID: h.ID, PaymentToken: token, IdempotencyKey: key})
}

// outcome is what a checkout in the background returned.
type outcome struct {
	res Result
	err error
}

// payLater runs w.pay in a goroutine; what it returned comes on the channel.
func (w *world) payLater(h hold.Hold, token, key string) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		res, err := w.pay(h, token, key)
		done <- outcome{res, err}
	}()
	return done
}

// crashAfterBegin leaves a pending order as a process that died after writing
// it would (its lease lapsed), charged at Payrail or not, and ages it by two
// minutes, past the recovery age.
func (w *world) crashAfterBegin(t *testing.T, h hold.Hold, charge bool) pendingOrder {
	t.Helper()
	o := w.crashAfterCharge(t, h, charge)
	w.age(t, o.ID, 2*time.Minute)
	return o
}

// crashAfterCharge is crashAfterBegin without the aging: the order is as new
// as it is, only its lease lapsed.
func (w *world) crashAfterCharge(t *testing.T, h hold.Hold, charge bool) pendingOrder {
	t.Helper()
	ctx := context.Background()
	o, err := w.checkout.store.begin(ctx, h.BuyerID, h.ID, nil, w.checkout.payments.Timeout(), w.checkout.lease)
	if err != nil {
		t.Fatal(err)
	}
	if charge {
		if _, err := w.checkout.payments.Charge(ctx, o.BuyerID, o.ID, o.TotalCents, o.Currency, payrail.TokenVisa); err != nil {
			t.Fatal(err)
		}
	}
	w.age(t, o.ID, 0)
	return o
}

// age moves an order's times (creation, charge deadline) back by d, and lets
// its lease lapse, as if the process working on it died d ago.
func (w *world) age(t *testing.T, orderID string, d time.Duration) {
	t.Helper()
	if _, err := w.db.Exec(context.Background(), `
		UPDATE orders SET created_at = created_at - $2::bigint * interval '1 microsecond',
		                  charge_deadline = charge_deadline - $2::bigint * interval '1 microsecond',
		                  lease_until = NULL
		WHERE id = $1`, orderID, d.Microseconds()); err != nil {
		t.Fatal(err)
	}
}

// orderStatus reads an order's status straight from the table.
func (w *world) orderStatus(t *testing.T, orderID string) string {
	t.Helper()
	var s string
	if err := w.db.QueryRow(context.Background(), `SELECT status FROM orders WHERE id = $1`, orderID).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *world) charges(t *testing.T) []payrail.Charge {
	t.Helper()
	all, err := w.payrail.Charges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// violations are the rows of the money invariant.
func (w *world) violations(t *testing.T) []string {
	t.Helper()
	return testenv.MoneyViolations(t, w.db)
}

// noViolations fails the test when the money invariant does not hold.
func (w *world) noViolations(t *testing.T) {
	t.Helper()
	if v := w.violations(t); len(v) > 0 {
		t.Errorf("the money invariant is violated:\n%s", strings.Join(v, "\n"))
	}
}

// testGauge and testCounter read a metric's value.
func testGauge(t *testing.T, g prometheus.Gauge) float64 { t.Helper(); return testutil.ToFloat64(g) }

func testCounter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	return testutil.ToFloat64(c)
}

// chargeUnderWay waits until Payrail has the charge of the checkout under way
// (the stub records a charge before its latency), and returns the id of its
// order, pending while the answer is on its way back.
func (w *world) chargeUnderWay(t *testing.T) string {
	t.Helper()
	w.waitFor(t, "Payrail to have the checkout's charge", `SELECT EXISTS (SELECT FROM payrail.charges)`)
	var orderID string
	if err := w.db.QueryRow(context.Background(), `SELECT id::text FROM orders WHERE status = 'pending'`).Scan(&orderID); err != nil {
		t.Fatalf("the order of the charge under way: %v", err)
	}
	return orderID
}

// waitFor waits until the query, of one boolean, says true.
func (w *world) waitFor(t *testing.T, what, query string, args ...any) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool {
		var yes *bool
		if err := w.db.QueryRow(context.Background(), query, args...).Scan(&yes); err != nil {
			t.Fatal(err)
		}
		return yes != nil && *yes
	}, what)
}
