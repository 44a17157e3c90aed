package checkout

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/payrail"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// heldAnswers is a handler in front of Payrail that, once armed, lets the next
// POST /charges be decided (Payrail charges on arrival) but holds its answer
// back until the connection is cut: the moment a Payrail killed mid-charge
// dies in.
type heldAnswers struct {
	next http.Handler

	mu        sync.Mutex
	answering chan struct{} // closed when the held request's answer is ready
}

// arm holds back the next charge's answer; the channel closes once Payrail has
// decided it.
func (h *heldAnswers) arm() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answering = make(chan struct{})
	return h.answering
}

func (h *heldAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	answering := h.answering
	if r.Method == http.MethodPost && r.URL.Path == "/charges" {
		h.answering = nil
	} else {
		answering = nil
	}
	h.mu.Unlock()
	if answering == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(heldWriter{ResponseWriter: w, r: r, answering: answering}, r)
}

// heldWriter never answers: the first write waits until the client's
// connection is gone.
type heldWriter struct {
	http.ResponseWriter
	r         *http.Request
	answering chan struct{}
}

func (w heldWriter) WriteHeader(int) {
	close(w.answering)
	<-w.r.Context().Done()
}

func (w heldWriter) Write(p []byte) (int, error) { return len(p), nil }

// TestPayrailKilledMidChargeOnAReusedConnection replays the soak's double
// charge. Payrail has charged the buyer and is killed before its answer's
// first byte, on a keep-alive connection an earlier charge used. Go's
// transport then resends the request on a new connection (it carries an
// Idempotency-Key, so the transport deems it replayable), which the dead
// Payrail refuses. That refusal proves nothing about the first try: the
// buyer must get the pending order, not "certainly no charge"; the same-key
// retry must answer that order and charge nothing; recovery confirms it; and
// Payrail holds exactly one charge for the checkout.
func TestPayrailKilledMidChargeOnAReusedConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	held := &heldAnswers{next: w.payrail}
	stub := testenv.NewKillableServer(t, held)
	w.checkout = w.newService(stub.URL(), setup{})

	// A first checkout leaves its connection to Payrail open, for the next.
	if res, err := w.pay(w.hold(t, 0), payrail.TokenVisa, "first"); err != nil || res.Order.Status != Confirmed {
		t.Fatalf("the first checkout = %+v, %v", res, err)
	}
	answering := held.arm()
	h := w.hold(t, 1)
	done := w.payLater(h, payrail.TokenVisa, "k")
	<-answering // Payrail has charged, and is about to answer
	if n := stub.Accepted(); n != 1 {
		t.Fatalf("Payrail accepted %d connections, want 1: the charge must come on the reused one", n)
	}
	stub.Kill()
	got := <-done
	if got.err != nil || got.res.Order.Status != Pending {
		t.Errorf("the checkout whose Payrail was killed mid-charge = %+v, %v; want the pending order (the outcome is unknown)", got.res.Order, got.err)
	}
	if n := stub.Accepted(); n != 1 {
		t.Logf("Payrail accepted %d connections", n) // the resend was refused: nothing listened
	}

	stub.Start()
	again, err := w.pay(h, payrail.TokenVisa, "k")
	t.Logf("the same-key retry after Payrail came back: %s, replayed %v, %v", again.Order.Status, again.Replayed, err)
	if got.err == nil && (err != nil || again.Order.ID != got.res.Order.ID || !again.Replayed) {
		t.Errorf("the same-key retry = %+v, %v; want the first order, replayed", again, err)
	}
	if got.err == nil {
		w.age(t, got.res.Order.ID, 2*time.Minute)
		if r, err := w.checkout.Recover(ctx); err != nil || r.Confirmed != 1 {
			t.Errorf("Recover = %+v, %v; want the charged order confirmed", r, err)
		}
		if final, err := w.pay(h, payrail.TokenVisa, "k"); err != nil || final.Order.Status != Confirmed || len(final.Order.Tickets) != 1 {
			t.Errorf("the key after recovery = %+v, %v; want the confirmed order with its ticket", final.Order, err)
		}
	}
	var charges int
	if err := w.db.QueryRow(ctx, `
		SELECT count(*) FROM payrail.charges c JOIN orders o ON o.id::text = c.idempotency_key
		WHERE o.hold_id = $1 AND c.status = 'succeeded'`, h.ID).Scan(&charges); err != nil {
		t.Fatal(err)
	}
	if charges != 1 {
		t.Errorf("Payrail charged the hold %d times, want once", charges)
	}
	w.noViolations(t)
}

// TestARefusedConnectionIsCertainlyNoCharge: with nothing listening where
// Payrail should be, no try of the charge ever had a connection, so the
// refusal proves that nothing was charged: the order fails, the hold is
// active again, and a retry with the same key may try again.
func TestARefusedConnectionIsCertainlyNoCharge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, setup{})
	stub := testenv.NewKillableServer(t, w.payrail)
	stub.Kill()
	w.checkout = w.newService(stub.URL(), setup{})
	h := w.hold(t, 0)
	res, err := w.pay(h, payrail.TokenVisa, "k")
	if !errors.Is(err, ErrPaymentUnavailable) || res.Order.Status != Failed {
		t.Fatalf("checkout with Payrail down = %+v, %v; want the failed order (certainly no charge)", res.Order, err)
	}
	if got, _ := w.holds.Get(ctx, w.buyer, h.ID); got.Status != hold.Active {
		t.Errorf("the hold is %s, want active again", got.Status)
	}
	stub.Start()
	if res, err := w.pay(h, payrail.TokenVisa, "k"); err != nil || res.Order.Status != Confirmed || res.Replayed {
		t.Errorf("the same-key retry with Payrail back = %+v, %v; want a new attempt, confirmed", res, err)
	}
	if n := len(w.charges(t)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	w.noViolations(t)
}
