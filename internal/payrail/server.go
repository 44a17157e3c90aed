package payrail

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MaxKeyLength is the longest Idempotency-Key accepted, in bytes.
const MaxKeyLength = 255

// Config tunes the failure modes of a Server. The zero value answers at once,
// records at once and never fails on its own (tok_error still answers 500).
type Config struct {
	// Latency delays every POST /charges and POST /charges/{id}/refunds
	// response (PAYRAIL_LATENCY; the caller sets its default of 400ms). The
	// charge or refund is recorded before the delay.
	Latency time.Duration
	// LatencyJitter adds a random share of itself, from 0 up to it, to each
	// response's Latency (PAYRAIL_LATENCY_JITTER).
	LatencyJitter time.Duration
	// FailureRate is the share, 0 to 1, of new charges and new refunds
	// answered 500 with nothing recorded (PAYRAIL_FAILURE_RATE). 0 never
	// fails, 1 always does.
	FailureRate float64
	// RecordDelay makes each new charge visible to lookups and listings only a
	// random time after it was made, from 0 up to RecordDelay
	// (PAYRAIL_RECORD_DELAY): a provider whose records lag its decisions. The
	// POST that made it, and its replays, see it at once.
	RecordDelay time.Duration
	// Rand returns a number in [0, 1); it rolls the failures, the jitter and the
	// record delays. Nil means math/rand/v2.Float64. Calls are serialized.
	Rand func() float64
	// APIKey, when set, is the key every request but GET /healthz must carry,
	// as "Authorization: Bearer <key>" (PAYRAIL_API_KEY; `stagedoor payrail`
	// requires one). Others are answered 401 and nothing is looked at. Empty:
	// no key is asked for (an in-process stub of a test).
	APIKey string
}

// Validate reports whether the config can be served, naming the bad field.
func (c Config) Validate() error {
	switch {
	case c.Latency < 0:
		return fmt.Errorf("payrail: latency %s is negative", c.Latency)
	case c.LatencyJitter < 0:
		return fmt.Errorf("payrail: latency jitter %s is negative", c.LatencyJitter)
	case c.RecordDelay < 0:
		return fmt.Errorf("payrail: record delay %s is negative", c.RecordDelay)
	case math.IsNaN(c.FailureRate) || c.FailureRate < 0 || c.FailureRate > 1:
		return fmt.Errorf("payrail: failure rate %v is not between 0 and 1", c.FailureRate)
	}
	return nil
}

// Server is the Payrail stub, an http.Handler safe for concurrent use. Its
// charges are kept in PostgreSQL: a new Server on the same database (a restart)
// knows every charge the old one made.
type Server struct {
	cfg    Config
	log    *slog.Logger
	mux    *http.ServeMux
	ledger ledger
	key    *[sha256.Size]byte // the API key's SHA-256; nil: none asked for

	randMu sync.Mutex
}

// Open returns a Server whose ledger is in db (schema payrail, created when
// missing). A nil logger discards the logs. It fails when cfg.Validate does.
func Open(ctx context.Context, db *pgxpool.Pool, cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l, err := openLedger(ctx, db)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: logger, mux: http.NewServeMux(), ledger: l}
	if cfg.APIKey != "" {
		sum := sha256.Sum256([]byte(cfg.APIKey))
		s.key = &sum
	}
	s.mux.HandleFunc("POST /charges", s.handleCreateCharge)
	s.mux.HandleFunc("GET /charges", s.handleGetCharges)
	s.mux.HandleFunc("POST /charges/{id}/refunds", s.handleRefund)
	s.mux.HandleFunc("GET /refunds", s.handleGetRefunds)
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	return s, nil
}

// ServeHTTP serves the Payrail routes listed in the package doc. With an API
// key, a request without it is answered 401 before anything is read.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.key != nil && r.URL.Path != "/healthz" && !s.authorized(r) {
		s.log.Info("payrail: request refused: no valid API key", "method", r.Method, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="payrail"`)
		writeJSON(w, http.StatusUnauthorized, errorBody("payrail: a valid API key is required (Authorization: Bearer <PAYRAIL_API_KEY>); nothing was done"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized reports whether r carries the API key, compared in constant time.
func (s *Server) authorized(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], s.key[:]) == 1
}

// Charges returns every charge made (succeeded and declined, recorded or still
// waiting to be), in creation order.
func (s *Server) Charges(ctx context.Context) ([]Charge, error) { return s.ledger.all(ctx) }

// roll returns a number in [0, 1) from the configured source.
func (s *Server) roll() float64 {
	s.randMu.Lock()
	defer s.randMu.Unlock()
	return s.cfg.Rand()
}

// upTo returns a random duration from 0 up to d.
func (s *Server) upTo(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(s.roll() * float64(d))
}

func (s *Server) handleCreateCharge(w http.ResponseWriter, r *http.Request) {
	status, body, replayed := s.createCharge(w, r)
	// The outcome is settled (and a charge recorded) before this wait, so a
	// client that goes away during it still has its charge.
	if !s.wait(r, s.cfg.Latency+s.upTo(s.cfg.LatencyJitter)) {
		s.log.Info("payrail: client went away; its outcome stands",
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
	// A charge is made when its request's turn comes, if its client is still
	// there; once made, it stands whatever happens to the connection.
	c, out, err := s.ledger.settle(context.WithoutCancel(r.Context()), key, func() decision {
		switch {
		case r.Context().Err() != nil:
			return decision{out: outcomeAbandoned}
		case req.Token == TokenError:
			reason = "tok_error"
			return decision{out: outcomeFailed}
		case s.cfg.FailureRate > 0 && s.roll() < s.cfg.FailureRate:
			reason = "injected failure"
			return decision{out: outcomeFailed}
		}
		return decision{out: outcomeNew, charge: req.outcome(), recordAfter: s.upTo(s.cfg.RecordDelay)}
	})
	lg := s.log.With("idempotency_key", key, "token", redactToken(req.Token),
		"amount_cents", req.AmountCents, "currency", req.Currency)
	switch {
	case err != nil:
		// The ledger may or may not have committed: not a 500, which promises
		// that nothing was charged.
		lg.Error("payrail: ledger unavailable; outcome unknown", "error", err)
		return http.StatusServiceUnavailable, errorBody("payrail: ledger unavailable; the outcome is unknown: retry with the same Idempotency-Key"), false
	case out == outcomeAbandoned:
		lg.Info("payrail: client went away before its charge was made; nothing charged")
		return http.StatusInternalServerError, errorBody("payrail: the client went away before the charge was made; nothing was charged"), false
	case out == outcomeFailed:
		lg.Warn("payrail: charge failed with 500; nothing charged", "reason", reason)
		return http.StatusInternalServerError, errorBody("payrail: internal error (" + reason + "); nothing was charged"), false
	case out == outcomeReplayed:
		lg.Info("payrail: charge replayed", "id", c.ID, "status", c.Status)
	default:
		lg.Info("payrail: charge made", "id", c.ID, "status", c.Status, "recorded_at", c.RecordedAt)
	}
	if c.Status == StatusSucceeded {
		return http.StatusCreated, c, out == outcomeReplayed
	}
	return http.StatusPaymentRequired, c, out == outcomeReplayed
}

// wait sleeps for d and reports whether the client is still there at its end.
// It returns early, false, when the client goes away.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// maxListLimit is the most charges one GET /charges answers with.
const maxListLimit = 1000

func (s *Server) handleGetCharges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ctx := r.Context()
	if q.Has("idempotency_key") {
		key := q.Get("idempotency_key")
		if key == "" {
			writeJSON(w, http.StatusBadRequest, errorBody("idempotency_key must not be empty"))
			return
		}
		c, ok, cov, err := s.ledger.byIdempotencyKey(ctx, key)
		switch {
		case err != nil:
			s.log.Error("payrail: lookup failed", "error", err)
			writeJSON(w, http.StatusInternalServerError, errorBody("payrail: internal error (ledger unavailable)"))
		case ok:
			writeJSON(w, http.StatusOK, c)
		default:
			writeJSON(w, http.StatusNotFound, struct {
				Error string `json:"error"`
				Coverage
			}{"no charge with this idempotency key", cov})
		}
		return
	}
	after, afterID, limit, err := listParams(q.Get("recorded_after"), q.Get("after_id"), q.Get("limit"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(err.Error()))
		return
	}
	cov, charges, err := s.ledger.coveredList(ctx, after, afterID, limit)
	if err != nil {
		s.log.Error("payrail: listing failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody("payrail: internal error (ledger unavailable)"))
		return
	}
	if charges == nil {
		charges = []Charge{}
	}
	writeJSON(w, http.StatusOK, struct {
		Charges []Charge `json:"charges"`
		Coverage
	}{charges, cov})
}

// listParams reads GET /charges's paging: recorded_after (RFC 3339) and after_id
// name the last charge already seen; limit is 1 to maxListLimit (default).
func listParams(recordedAfter, afterID, limit string) (time.Time, string, int, error) {
	var after time.Time
	if recordedAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, recordedAfter)
		if err != nil {
			return time.Time{}, "", 0, errors.New("recorded_after must be an RFC 3339 time")
		}
		after = t
	}
	n := maxListLimit
	if limit != "" {
		v, err := strconv.Atoi(limit)
		if err != nil || v < 1 || v > maxListLimit {
			return time.Time{}, "", 0, fmt.Errorf("limit must be 1 to %d", maxListLimit)
		}
		n = v
	}
	return after, afterID, n, nil
}

func (s *Server) handleGetRefunds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, afterID, limit, err := listParams(q.Get("created_after"), q.Get("after_id"), q.Get("limit"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(strings.Replace(err.Error(), "recorded_after", "created_after", 1)))
		return
	}
	refunds, err := s.ledger.refundsAfter(r.Context(), after, afterID, limit)
	if err != nil {
		s.log.Error("payrail: listing refunds failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody("payrail: internal error (ledger unavailable)"))
		return
	}
	if refunds == nil {
		refunds = []Refund{}
	}
	writeJSON(w, http.StatusOK, struct {
		Refunds []Refund `json:"refunds"`
	}{refunds})
}

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
