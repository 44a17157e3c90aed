package waitroom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/guard"
)

// Errors returned by this package; internal/httpapi maps them to problems.
var (
	// ErrNoRoom: the event has no waiting room (there is no queue to join;
	// its seats are held directly).
	ErrNoRoom = errors.New("the event has no waiting room")
	// ErrNotAdmitted: the event has a waiting room and the buyer holds no
	// current admission to it.
	ErrNotAdmitted = errors.New("not admitted")
	// ErrUnavailable: the room's state in Redis could not be reached in time.
	// The room fails closed: nobody joins or holds until it answers again.
	ErrUnavailable = errors.New("the waiting room is unavailable")
)

// DefaultAdmission is how long an admission lasts (the contract says 15 minutes).
const DefaultAdmission = 15 * time.Minute

// RetryAfter is how long a caller refused with ErrUnavailable should wait.
const RetryAfter = 2 * time.Second

// State is where a buyer stands in a queue.
type State string

// The states Join and Status report.
const (
	Waiting  State = "waiting"
	Admitted State = "admitted"
)

// Status is one buyer's place in an event's queue, as of Now.
type Status struct {
	State State
	// Position is 1 for the next buyer to be admitted (Waiting only).
	Position int
	// EstimatedWait is how long until she is admitted, at the room's rate and
	// with everyone ahead of her already queued (Waiting only, not Paused).
	EstimatedWait time.Duration
	// Paused: an operator paused the room's admissions (Change); she keeps
	// her place, and nobody knows how long she waits (Waiting only).
	Paused bool
	// AdmittedUntil is when her admission ends (Admitted, or Closed after
	// her admission).
	AdmittedUntil time.Time
	// ClosedReason says why the room is Closed: SeatsHeld or EventStarted.
	ClosedReason string
	// Now is Redis's clock when this was decided.
	Now time.Time
	// Place is what the room knows of her as of Now, for a queue token
	// (internal/queuetoken) that lets Poll answer her next polls without Redis.
	Place Place
}

// Progress is how far an event's queue has come, as of Now.
type Progress struct {
	// Queued is how many buyers are in the queue, admitted ones included.
	Queued int
	// Admitted is how many of them have been admitted (their admission may
	// have lapsed since).
	Admitted int
	// AdmittedThrough is how many buyers the room has ever admitted, those who
	// joined again after their admission lapsed included: a buyer whose
	// Place.Rank is below it has been admitted.
	AdmittedThrough int
	// Drawn: the sale has opened (Now is on_sale_at or later), so the
	// lottery is drawn and no buyer's Place.Rank changes any more.
	Drawn bool
	// EarlyJoiners is how many buyers joined before the sale opened, the
	// lottery's size (Drawn only).
	EarlyJoiners int
	// Rate is the room's admissions a second: the event's, until an operator
	// changed it (Change).
	Rate int
	// Paused: an operator paused the room's admissions.
	Paused bool
	// ChangedAt is when an operator last changed the rate or paused or
	// resumed the room once the sale had opened; zero if none did.
	ChangedAt time.Time
	schedule  schedule
	// Now is Redis's clock when the progress was read.
	Now time.Time
}

// Options configure a Service; all are optional.
type Options struct {
	// Prefix is put before every key: <Prefix>wr:{<event id>}:….
	Prefix string
	// Timeout is the deadline of one call to Redis; default 50 ms.
	Timeout time.Duration
	// Admission is how long an admission lasts; default DefaultAdmission
	// (tests shorten it).
	Admission time.Duration
	// BreakerFailures is how many failed calls in a row open the breaker
	// (default 5), which then refuses without calling Redis for
	// BreakerCooldown (default 1 s) before letting one probe through.
	BreakerFailures int
	BreakerCooldown time.Duration
	// Logger receives the breakers' changes of state and each node's outage;
	// nil logs nothing.
	Logger *slog.Logger
	// NodeOf names the Redis node that serves a key (conn.NodeOf), so that each
	// node has a breaker of its own: a dead node fails closed only the rooms it
	// serves. nil: one breaker for all.
	NodeOf func(ctx context.Context, key string) string
	// Registerer takes stagedoor_redis_calls_total; nil registers nothing.
	Registerer prometheus.Registerer
	// MaxAdmissions bounds the admissions this instance remembers (see
	// admissions.go); default DefaultMaxAdmissions.
	MaxAdmissions int
	// Clock is this instance's clock, on which remembered admissions end and
	// which ages the progress Poll keeps; default time.Now (tests move it on
	// by hand). The room itself always runs on Redis's clock.
	Clock func() time.Time
}

// Service runs the waiting rooms of all events. Safe for concurrent use.
type Service struct {
	rdb       redis.Scripter
	prefix    string
	admission time.Duration
	lottery   func() float64 // a buyer's place among early joiners, in [0, 1)
	nodes     *guard.Nodes   // the deadline and breaker of every Redis call, per node
	clock     func() time.Time
	admitted  *admissions // the admissions this instance has read, until they end

	mu       sync.Mutex
	progress map[string]*progressEntry // event id → its progress, as Poll last read it
	batches  map[string]*batch         // event id → the buyers waiting for a status call
}

// New returns a Service on rdb (a *redis.Client, *redis.ClusterClient or
// redis.UniversalClient).
func New(rdb redis.Scripter, o Options) *Service {
	s := &Service{rdb: rdb, prefix: o.Prefix, admission: o.Admission, lottery: rand.Float64,
		nodes: guard.NewNodes(guard.Options{Name: "waitroom", Timeout: o.Timeout,
			Failures: o.BreakerFailures, Cooldown: o.BreakerCooldown, Logger: o.Logger}, o.NodeOf, o.Registerer)}
	if s.admission <= 0 {
		s.admission = DefaultAdmission
	}
	if s.clock = o.Clock; s.clock == nil {
		s.clock = time.Now
	}
	if o.MaxAdmissions <= 0 {
		o.MaxAdmissions = DefaultMaxAdmissions
	}
	s.admitted = newAdmissions(o.MaxAdmissions, s.clock)
	s.progress, s.batches = map[string]*progressEntry{}, map[string]*batch{}
	return s
}

// room is what the script needs to know about an event's waiting room.
type room struct {
	eventID  string
	onSaleAt time.Time
	rate     int
}

// CheckRoom returns an error wrapping ErrNoRoom when the event has no waiting
// room, and nil when it has one. It does not call Redis.
func CheckRoom(ev event.Info) error {
	_, err := roomOf(ev)
	return err
}

func roomOf(ev event.Info) (room, error) {
	if ev.WaitingRoom == nil || ev.WaitingRoom.AdmitPerSecond < 1 {
		return room{}, fmt.Errorf("%w: event %s has no waiting room; hold its seats directly", ErrNoRoom, ev.ID)
	}
	return room{eventID: ev.ID, onSaleAt: ev.OnSaleAt, rate: ev.WaitingRoom.AdmitPerSecond}, nil
}

// Join puts the buyer in the event's queue, or leaves her where she is if she
// is already waiting or admitted; a buyer whose admission lapsed joins again at
// the back. It returns her status, or an error wrapping ErrNoRoom or
// ErrUnavailable.
func (s *Service) Join(ctx context.Context, ev event.Info, buyerID string) (Status, error) {
	r, err := roomOf(ev)
	if err != nil {
		return Status{}, err
	}
	start := s.clock()
	rep, err := s.call(ctx, r, "join", buyerID)
	if err != nil {
		return Status{}, err
	}
	st, ok := rep.status(r, buyerID, 0)
	if !ok { // cannot happen: the script just queued her
		return Status{}, fmt.Errorf("waitroom: buyer %s not queued after joining event %s", buyerID, ev.ID)
	}
	s.admitted.forget(ev.ID, buyerID, true)
	s.admitted.remember(ev.ID, buyerID, start, st)
	return st, nil
}

// Status returns the buyer's place in the event's queue, or an error wrapping
// ErrNoRoom, an errkind.NotFound error (never joined, or her admission lapsed) or
// ErrUnavailable.
func (s *Service) Status(ctx context.Context, ev event.Info, buyerID string) (Status, error) {
	st, why, err := s.status(ctx, ev, buyerID)
	if err == nil && why != "" {
		err = errkind.NotFoundf("not in the queue: %s", why)
	}
	return st, err
}

// CheckAdmitted returns nil when the event has no waiting room or the buyer's
// admission to it is current, and otherwise an error wrapping ErrNotAdmitted
// (saying where she stands) or ErrUnavailable. Events without a room cost no
// call to Redis, and neither does an admission this instance has read before
// (by a join or a hold) until it ends (admissions.go): that one is
// honoured from memory, even while the room's Redis cannot answer. A
// refusal is remembered for RefusalMemory, or until her turn if sooner.
func (s *Service) CheckAdmitted(ctx context.Context, ev event.Info, buyerID string) error {
	if ev.WaitingRoom == nil {
		return nil
	}
	if refusal, ok := s.admitted.current(ev.ID, buyerID); ok {
		return refusal
	}
	start := s.clock()
	st, why, err := s.status(ctx, ev, buyerID)
	switch {
	case err != nil:
		return err
	case why != "":
		err = fmt.Errorf("%w: %s", ErrNotAdmitted, why)
		s.admitted.refuse(ev.ID, buyerID, start, RefusalMemory, err)
		return err
	case st.State == Waiting && st.Paused:
		err = fmt.Errorf("%w: event %s has a waiting room, paused by its organizer, and you are number %d in its queue",
			ErrNotAdmitted, ev.ID, st.Position)
		s.admitted.refuse(ev.ID, buyerID, start, RefusalMemory, err) // her turn is later than any
		return err
	case st.State == Waiting:
		err = fmt.Errorf("%w: event %s has a waiting room and you are number %d in its queue, about %d s from admission",
			ErrNotAdmitted, ev.ID, st.Position, WaitSeconds(st.EstimatedWait))
		s.admitted.refuse(ev.ID, buyerID, start, st.EstimatedWait, err)
		return err
	}
	return nil
}

// status is the buyer's Status, or why she is not queued.
func (s *Service) status(ctx context.Context, ev event.Info, buyerID string) (Status, string, error) {
	r, err := roomOf(ev)
	if err != nil {
		return Status{}, "", err
	}
	start := s.clock()
	rep, err := s.call(ctx, r, "status", buyerID)
	if err != nil {
		return Status{}, "", err
	}
	st, why := rep.explain(r, buyerID, 0)
	if why == "" {
		s.admitted.remember(ev.ID, buyerID, start, st)
	}
	return st, why, nil
}

// explain is the Status of the i-th buyer of the reply, or why she is not
// queued.
func (rep reply) explain(r room, buyerID string, i int) (Status, string) {
	if st, ok := rep.status(r, buyerID, i); ok {
		return st, ""
	}
	if b := rep.buyers[i]; b.kind == kindLapsed {
		return Status{}, lapsedWhy(r.eventID, micros(b.a))
	}
	return Status{}, fmt.Sprintf("you have not joined the waiting room of event %s", r.eventID)
}

func lapsedWhy(eventID string, until time.Time) string {
	return fmt.Sprintf("your admission to event %s lapsed at %s; join its queue again to queue anew",
		eventID, until.Format(time.RFC3339))
}

// Progress returns how many buyers the event's queue holds and how many of
// them have been admitted, for operators and tests. Errors wrap ErrNoRoom or
// ErrUnavailable.
func (s *Service) Progress(ctx context.Context, ev event.Info) (Progress, error) {
	r, err := roomOf(ev)
	if err != nil {
		return Progress{}, err
	}
	rep, err := s.call(ctx, r, "progress")
	if err != nil {
		return Progress{}, err
	}
	return rep.progress(r), nil
}

// Waiting is how many buyers wait, not yet admitted.
func (p Progress) Waiting() int { return max(0, p.Queued-p.Admitted) }

func (rep reply) progress(r room) Progress {
	sc := rep.schedule
	p := Progress{Queued: rep.queued, Admitted: rep.admitted, AdmittedThrough: rep.admitted + rep.removed,
		Drawn: !rep.now.Before(r.onSaleAt), EarlyJoiners: rep.early, Now: rep.now,
		Rate: int(sc.rate), Paused: sc.paused, schedule: sc}
	if sc.changed() {
		p.ChangedAt = micros(sc.t0)
	}
	return p
}

// WaitSeconds is a wait in whole seconds, rounded up.
func WaitSeconds(d time.Duration) int64 {
	return int64((max(d, 0) + time.Second - 1) / time.Second)
}

// call runs the room's script under the deadline and the breaker of the node
// that serves the room. When the caller's context ends first, its error is
// returned as it is.
func (s *Service) call(ctx context.Context, r room, op string, buyers ...string) (reply, error) {
	var rep reply
	err := s.nodes.For(ctx, s.roomKey(r)).Do(ctx, func(rctx context.Context) error {
		var err error
		rep, err = s.run(rctx, r, op, buyers)
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return reply{}, err
	case err != nil:
		return reply{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return rep, nil
}

// status is the Status the reply gives of its i-th buyer, and false when she
// is not queued (or her admission lapsed).
func (rep reply) status(r room, buyerID string, i int) (Status, bool) {
	b := rep.buyers[i]
	pl := Place{EventID: r.eventID, BuyerID: buyerID, Drawn: !rep.now.Before(r.onSaleAt), Rank: b.rank, Tick: b.tick}
	if !pl.Drawn {
		// Before the draw only the lottery score is hers for good; her rank is
		// her place among those queued so far.
		pl.Tick, pl.Lottery, pl.Queued = 0, b.lottery, int64(rep.queued)
	}
	switch b.kind {
	case kindWaiting:
		st := Status{State: Waiting, Position: int(b.a), Now: rep.now, Place: pl}
		if st.Paused = b.b < 0; !st.Paused {
			st.EstimatedWait = time.Duration(b.b) * time.Microsecond
		}
		return st, true
	case kindAdmitted:
		pl.Until = b.a
		return Status{State: Admitted, AdmittedUntil: micros(b.a), Now: rep.now, Place: pl}, true
	}
	return Status{}, false
}

func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }
