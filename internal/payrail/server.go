package payrail

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// MaxKeyLength is the longest Idempotency-Key accepted, in bytes.
const MaxKeyLength = 255

// Config tunes the failure modes of a Server. The zero value answers at once
// and never fails on its own (tok_error still answers 500).
type Config struct {
	// Latency delays every POST /charges response (PAYRAIL_LATENCY; the caller
	// sets its default of 400ms). The charge is recorded before the delay.
	Latency time.Duration
	// FailureRate is the share, 0 to 1, of new charges answered 500 with nothing
	// recorded (PAYRAIL_FAILURE_RATE). 0 never fails, 1 always does.
	FailureRate float64
	// Rand returns a number in [0, 1); a new charge fails when it is below
	// FailureRate. Nil means math/rand/v2.Float64. Calls are serialized.
	Rand func() float64
}

// Validate reports whether the config can be served, naming the bad field.
func (c Config) Validate() error {
	if c.Latency < 0 {
		return fmt.Errorf("payrail: latency %s is negative", c.Latency)
	}
	if math.IsNaN(c.FailureRate) || c.FailureRate < 0 || c.FailureRate > 1 {
		return fmt.Errorf("payrail: failure rate %v is not between 0 and 1", c.FailureRate)
	}
	return nil
}

// Server is the Payrail stub, an http.Handler safe for concurrent use. Its
// charges live in memory for the life of the Server.
type Server struct {
	cfg    Config
	log    *slog.Logger
	mux    *http.ServeMux
	ledger ledger
}

// NewServer returns a Server with no charges. A nil logger discards the logs.
// It panics when cfg.Validate fails: check the config first.
func NewServer(cfg Config, logger *slog.Logger) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: logger, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /charges", s.handleCreateCharge)
	s.mux.HandleFunc("GET /charges", s.handleGetCharges)
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	return s
}

// ServeHTTP serves the Payrail routes listed in the package doc.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Charges returns a snapshot of every recorded charge (succeeded and declined)
// in creation order.
func (s *Server) Charges() []Charge { return s.ledger.all() }

// Charge returns the charge recorded for an idempotency key, if any.
func (s *Server) Charge(idempotencyKey string) (Charge, bool) {
	return s.ledger.byIdempotencyKey(idempotencyKey)
}

func (s *Server) handleCreateCharge(w http.ResponseWriter, r *http.Request) {
	status, body, replayed := s.createCharge(w, r)
	// The outcome is settled (and a charge recorded) before this wait, so a
	// client that goes away during it still has its charge.
	if !s.wait(r) {
		s.log.Info("payrail: client went away during latency; outcome stands",
			"idempotency_key", r.Header.Get("Idempotency-Key"), "status", status)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, status, body)
}

// createCharge decides a POST /charges request and returns the response to send.
func (s *Server) createCharge(w http.ResponseWriter, r *http.Request) (status int, body any, replayed bool) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || len(key) > MaxKeyLength {
		return http.StatusBadRequest, errorBody("Idempotency-Key header must be 1 to 255 bytes"), false
	}
	req, err := decodeChargeRequest(w, r)
	if err != nil {
		s.log.Info("payrail: bad charge request", "idempotency_key", key, "error", err)
		return http.StatusBadRequest, errorBody(err.Error()), false
	}
	var reason string
	c, out := s.ledger.settle(key, func() (Charge, bool) {
		switch {
		case req.Token == TokenError:
			reason = "tok_error"
			return Charge{}, false
		case s.cfg.FailureRate > 0 && s.cfg.Rand() < s.cfg.FailureRate:
			reason = "injected failure"
			return Charge{}, false
		}
		return req.outcome(), true
	})
	lg := s.log.With("idempotency_key", key, "token", req.Token,
		"amount_cents", req.AmountCents, "currency", req.Currency)
	switch out {
	case outcomeFailed:
		lg.Warn("payrail: charge failed with 500; nothing charged", "reason", reason)
		return http.StatusInternalServerError, errorBody("payrail: internal error (" + reason + "); nothing was charged"), false
	case outcomeReplayed:
		lg.Info("payrail: charge replayed", "id", c.ID, "status", c.Status)
	default:
		lg.Info("payrail: charge recorded", "id", c.ID, "status", c.Status)
	}
	if c.Status == StatusSucceeded {
		return http.StatusCreated, c, out == outcomeReplayed
	}
	return http.StatusPaymentRequired, c, out == outcomeReplayed
}

// wait sleeps for the configured latency and reports whether the client is
// still there at its end. It returns early, false, when the client goes away.
func (s *Server) wait(r *http.Request) bool {
	if s.cfg.Latency <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(s.cfg.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) handleGetCharges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("idempotency_key") {
		writeJSON(w, http.StatusOK, map[string][]Charge{"charges": s.ledger.all()})
		return
	}
	key := q.Get("idempotency_key")
	if key == "" {
		writeJSON(w, http.StatusBadRequest, errorBody("idempotency_key must not be empty"))
		return
	}
	c, ok := s.ledger.byIdempotencyKey(key)
	if !ok {
		writeJSON(w, http.StatusNotFound, errorBody("no charge with this idempotency key"))
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
