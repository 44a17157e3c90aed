package mail

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/outage"
	"github.com/stagedoor/stagedoor/internal/protect"
)

// Defaults of a Sender.
const (
	DefaultEvery   = time.Second      // how often Run looks for due messages
	DefaultTimeout = 10 * time.Second // one SMTP exchange: a connection's set-up, or one message
	DefaultBatch   = 10               // messages claimed at once
	// maxPerPass bounds one pass's messages; the lock is then given up, and
	// the next pass goes on.
	maxPerPass = 500
	// idleEvery is how often a Sender without a mail server counts the
	// backlog: it sends nothing, and counting is all it does.
	idleEvery = 15 * time.Second
)

// Backoff is how long a message waits after a failed try: First after the
// first failure, twice as long after each next, at most Most. A Sender that
// cannot reach the server at all waits as long before it tries again.
type Backoff struct{ First, Most time.Duration }

// DefaultBackoff waits 2 s, 4 s, 8 s, … up to 5 minutes.
var DefaultBackoff = Backoff{First: 2 * time.Second, Most: 5 * time.Minute}

// after is the wait after the n-th failure in a row (n ≥ 1).
func (b Backoff) after(n int) time.Duration {
	d := b.First
	for i := 1; i < n && d < b.Most; i++ {
		d *= 2
	}
	return min(d, b.Most)
}

// senderLock is the advisory lock that lets one instance at a time send.
const senderLock = 0x5eed_0018

// Options configure a Sender.
type Options struct {
	// SMTPURL is the mail server (STAGEDOOR_SMTP_URL, see ParseServerURL).
	// Empty: nothing is sent; messages stay in the outbox, counted.
	SMTPURL   string
	From      string // STAGEDOOR_MAIL_FROM
	PublicURL string // STAGEDOOR_PUBLIC_URL: where the messages' links lead
	// TLS is the base of the TLS settings (its roots); nil: the system's.
	TLS      *tls.Config
	Timeout  time.Duration    // DefaultTimeout when 0
	Every    time.Duration    // DefaultEvery when 0
	Batch    int              // DefaultBatch when 0
	Backoff  Backoff          // DefaultBackoff when zero
	Clock    func() time.Time // time.Now when nil; tests move their own
	Sessions *pgxpool.Pool    // where the advisory lock is taken (PostgreSQL itself); the Sender's pool when nil
	Logger   *slog.Logger
	// Registerer takes the Sender's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
}

// Sender sends the outbox's messages that are due, on one instance at a time.
type Sender struct {
	db, sessions *pgxpool.Pool
	server       *Server // nil: no mail server configured
	render       *Renderer
	from         string // the envelope's sender: From's address
	o            Options
	lease        time.Duration // how long a claim on a batch lasts
	logger       *slog.Logger
	metrics      *senderMetrics
	smtp         *outage.Reporter // the mail server unreachable
	database     *outage.Reporter // PostgreSQL failing a pass

	// taken, when set (tests), is called once the server has a message and
	// before it is marked sent; an error ends the pass there, as a crash would.
	taken func(id int64) error

	mu          sync.Mutex
	pausedUntil time.Time      // the server could not be reached: no try before then
	unreached   int            // passes in a row that could not reach the server
	unmarked    map[int64]bool // taken by the server, not yet marked sent (the database failed)
}

// NewSender returns a Sender of db's outbox. It fails on options that do not
// read (config.Load checked them already for serve).
func NewSender(db *pgxpool.Pool, o Options) (*Sender, error) {
	render, err := NewRenderer(o.From, o.PublicURL)
	if err != nil {
		return nil, err
	}
	from, _ := mail.ParseAddress(o.From) // NewRenderer read it
	s := &Sender{db: db, sessions: o.Sessions, render: render, from: from.Address, o: o, logger: o.Logger,
		unmarked: map[int64]bool{}}
	if o.SMTPURL != "" {
		server, err := ParseServerURL(o.SMTPURL)
		if err != nil {
			return nil, err
		}
		s.server = &server
	}
	if s.sessions == nil {
		s.sessions = db
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.o.Timeout = cmp.Or(s.o.Timeout, DefaultTimeout)
	s.o.Every = cmp.Or(s.o.Every, DefaultEvery)
	s.o.Batch = cmp.Or(s.o.Batch, DefaultBatch)
	if s.o.Backoff == (Backoff{}) {
		s.o.Backoff = DefaultBackoff
	}
	if s.o.Clock == nil {
		s.o.Clock = time.Now
	}
	// A batch's claim outlasts sending each of its messages with a timeout
	// of its own, and a connection's set-up.
	s.lease = time.Duration(s.o.Batch+1)*s.o.Timeout + 5*time.Second
	s.metrics = newSenderMetrics(o.Registerer)
	s.smtp = outage.New(s.logger, "smtp", 0)
	s.database = outage.New(s.logger, "postgresql", 0)
	return s, nil
}

// Pass is what one SendDue did.
type Pass struct {
	Sent     int // messages the server took
	Deferred int // messages the server put off (4xx): tried again later
	GaveUp   int // messages never to be sent: refused for good (5xx), or not writable
	// Unreachable: the server could not be reached, or was lost; the pass
	// stopped, and the messages it had claimed wait their backoff.
	Unreachable bool
	Backlog     int64 // messages left to send after the pass
}

// SendDue sends the messages that are due, in order, unless another instance
// is sending (it holds the advisory lock): then it returns a zero Pass at
// once. Without a mail server it only counts the backlog.
func (s *Sender) SendDue(ctx context.Context) (Pass, error) {
	var p Pass
	if s.server == nil {
		return s.measure(ctx, s.db, p)
	}
	conn, err := s.sessions.Acquire(ctx) // the lock's session: the pass's statements run on it too
	if err != nil {
		return p, fmt.Errorf("mail: send: %w", err)
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, senderLock).Scan(&locked); err != nil {
		return p, fmt.Errorf("mail: send: %w", err)
	}
	if !locked {
		return p, nil
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, senderLock)
	if err := s.markUnmarked(ctx, conn); err != nil {
		return p, err
	}
	if s.paused() {
		return s.measure(ctx, conn, p)
	}
	var sess *session
	defer func() {
		if sess != nil {
			sess.close()
		}
	}()
	for tried := 0; tried < maxPerPass && ctx.Err() == nil; {
		now := s.o.Clock()
		leaseEnd := now.Add(s.lease)
		batch, err := claim(ctx, conn, now, leaseEnd, s.o.Batch, s.unmarkedIDs())
		if err != nil {
			return p, fmt.Errorf("mail: claim: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		tried += len(batch)
		stop, err := s.sendBatch(ctx, conn, &sess, batch, leaseEnd, &p)
		if err != nil {
			return p, err
		}
		if stop {
			break
		}
	}
	return s.measure(ctx, conn, p)
}

// sendBatch sends a claimed batch in order on the pass's session (opened at
// its first message). It stops, reporting so, when the server cannot be
// reached or the claim would lapse mid-message; its error is the database's.
func (s *Sender) sendBatch(ctx context.Context, q Querier, sess **session, batch []Queued, leaseEnd time.Time, p *Pass) (stop bool, err error) {
	for i, m := range batch {
		if s.o.Clock().Add(s.o.Timeout).After(leaseEnd) { // the claim could lapse mid-message
			return true, release(ctx, q, idsOf(batch[i:]))
		}
		raw, err := s.render.Render(m)
		if err != nil {
			p.GaveUp++
			s.metrics.failed.WithLabelValues("unwritable").Inc()
			s.logger.Error("mail: a message cannot be written; given up", "message", m.ID, "kind", m.Kind, "error", err)
			if err := giveUp(ctx, q, m.ID, s.o.Clock(), "cannot be written: "+err.Error()); err != nil {
				return true, fmt.Errorf("mail: give up message %d: %w", m.ID, err)
			}
			continue
		}
		if *sess == nil {
			if *sess, err = s.server.open(ctx, s.o.TLS, s.o.Timeout); err != nil {
				return true, s.unreachable(ctx, q, batch[i:], err, p)
			}
		}
		how, err := (*sess).send(s.from, m.To, raw)
		if err == nil {
			if s.taken != nil {
				if err := s.taken(m.ID); err != nil {
					return true, err
				}
			}
			// The server has the message: mark it sent before anything else.
			if err := s.markSent(ctx, q, m.ID); err != nil {
				return true, err
			}
			p.Sent++
			continue
		}
		switch how {
		case unreachable:
			(*sess).conn.Close()
			*sess = nil
			return true, s.unreachable(ctx, q, batch[i:], err, p)
		case deferred:
			p.Deferred++
			err = retryLater(ctx, q, []int64{m.ID}, s.o.Clock(), s.o.Backoff, s.server.scrub(err))
		case rejected:
			p.GaveUp++
			s.logger.Warn("mail: the server refused a message for good; given up", "message", m.ID, "kind", m.Kind, "error", s.server.scrub(err))
			err = giveUp(ctx, q, m.ID, s.o.Clock(), s.server.scrub(err))
		}
		s.metrics.failed.WithLabelValues(string(how)).Inc()
		if err != nil {
			return true, fmt.Errorf("mail: record a failed message: %w", err)
		}
		if err := (*sess).reset(); err != nil {
			(*sess).conn.Close()
			*sess = nil
		}
	}
	return false, nil
}

// markSent marks message id sent, at once after the server's 250: a crash
// between the two is the only way one message goes out twice. When the
// database fails it, the id is remembered and marked at the next pass (never
// sent again meanwhile by this instance), and the pass stops.
func (s *Sender) markSent(ctx context.Context, q Querier, id int64) error {
	s.metrics.sent.Inc()
	s.smtp.Succeeded()
	s.mu.Lock()
	s.unreached = 0
	s.mu.Unlock()
	if err := markSent(ctx, q, id, s.o.Clock()); err != nil {
		s.mu.Lock()
		s.unmarked[id] = true
		s.mu.Unlock()
		return fmt.Errorf("mail: mark message %d sent: %w", id, err)
	}
	return nil
}

// markUnmarked marks the messages the server took whose marking failed.
func (s *Sender) markUnmarked(ctx context.Context, q Querier) error {
	for _, id := range s.unmarkedIDs() {
		if err := markSent(ctx, q, id, s.o.Clock()); err != nil {
			return fmt.Errorf("mail: mark message %d sent: %w", id, err)
		}
		s.mu.Lock()
		delete(s.unmarked, id)
		s.mu.Unlock()
	}
	return nil
}

func (s *Sender) unmarkedIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, 0, len(s.unmarked))
	for id := range s.unmarked {
		out = append(out, id)
	}
	return out
}

// unreachable records that the server could not be reached (or was lost)
// with the messages left of a batch: each is tried again after its backoff,
// and this Sender tries nothing before its own (an outage of "smtp" in the log).
func (s *Sender) unreachable(ctx context.Context, q Querier, left []Queued, cause error, p *Pass) error {
	p.Unreachable = true
	why := s.server.scrub(cause)
	s.metrics.failed.WithLabelValues(string(unreachable)).Add(float64(len(left)))
	s.mu.Lock()
	s.unreached++
	s.pausedUntil = s.o.Clock().Add(s.o.Backoff.after(s.unreached))
	s.mu.Unlock()
	err := retryLater(ctx, q, idsOf(left), s.o.Clock(), s.o.Backoff, why)
	s.smtp.Failed(errors.New(why))
	if err != nil {
		return fmt.Errorf("mail: record a failed try: %w", err)
	}
	return nil
}

// paused reports whether the server was unreachable a moment ago, and its
// backoff has not passed.
func (s *Sender) paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.o.Clock().Before(s.pausedUntil)
}

func idsOf(ms []Queued) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// measure sets the backlog's gauges, and p's.
func (s *Sender) measure(ctx context.Context, q Querier, p Pass) (Pass, error) {
	n, oldest, err := backlog(ctx, q)
	if err != nil {
		return p, fmt.Errorf("mail: backlog: %w", err)
	}
	p.Backlog = n
	s.metrics.backlog.Set(float64(n))
	age := 0.0
	if n > 0 {
		age = max(0, s.o.Clock().Sub(oldest).Seconds())
	}
	s.metrics.oldest.Set(age)
	return p, nil
}

// Run sends what is due every Options.Every until ctx ends. Its database
// failures are logged as the database's outage, the mail server's as an
// outage of "smtp": never a line per message.
func (s *Sender) Run(ctx context.Context) {
	every := s.o.Every
	if s.server == nil {
		every = max(every, idleEvery)
		s.logger.Info("mail: STAGEDOOR_SMTP_URL is not set: notices stay in the outbox, unsent")
	} else {
		s.logger.Info("mail: sending the outbox", "smtp", s.server.String(), "from", s.render.from.String())
	}
	protect.Every(ctx, every, func(ctx context.Context) {
		switch _, err := s.SendDue(ctx); {
		case err != nil && ctx.Err() == nil:
			s.database.Failed(err)
		case err == nil:
			s.database.Succeeded()
		}
	})
}

// How long the janitor keeps the outbox's messages.
const (
	SentRetention   = 7 * 24 * time.Hour  // a sent message: to answer "did it go?"
	GaveUpRetention = 30 * 24 * time.Hour // a message given up: for an operator to look into
)

// PurgeSent deletes up to batch messages sent more than SentRetention ago or
// given up more than GaveUpRetention ago (the janitor calls it).
func (s *Sender) PurgeSent(ctx context.Context, batch int) (int64, error) {
	now := s.o.Clock()
	n, err := purge(ctx, s.db, now.Add(-SentRetention), now.Add(-GaveUpRetention), batch)
	if err != nil {
		return 0, fmt.Errorf("mail: purge: %w", err)
	}
	return n, nil
}
