package hold

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/ids"
	"github.com/stagedoor/stagedoor/internal/outage"
)

// Events is what placing a hold needs to know about events (*event.Service).
type Events interface {
	// Info returns the event's unchanging facts, or errkind.NotFound.
	Info(ctx context.Context, eventID string) (event.Info, error)
}

// Service places, reads, releases and expires holds.
type Service struct {
	store    store
	events   Events
	ttl      time.Duration
	maxHeld  int
	cooldown time.Duration // how long a buyer may not hold again seats they gave back
	now      func() time.Time
}

// NewService returns a Service whose holds last ttl (STAGEDOOR_HOLD_TTL) and
// that lets a buyer hold at most maxHeld seats of one event at once
// (STAGEDOOR_MAX_HELD_SEATS).
func NewService(db *pgxpool.Pool, events Events, ttl time.Duration, maxHeld int) *Service {
	return &Service{store: store{db: db}, events: events, ttl: ttl, maxHeld: maxHeld, now: time.Now}
}

// WithReholdCooldown makes the Service refuse a buyer's hold on seats that a
// hold of theirs released or let expire less than d ago
// (STAGEDOOR_REHOLD_COOLDOWN; 0, the default, refuses none), and returns it.
// Call it before the Service is used.
func (s *Service) WithReholdCooldown(d time.Duration) *Service {
	s.cooldown = d
	return s
}

// Plan checks a hold request without writing anything: 1 to MaxSeats distinct
// seat ids and places of general admission together, each of general a known
// section of general admission of the event, named once, with a quantity of at
// least 1; a known event whose sale has opened and that has not started. It
// returns an error wrapping errkind.Invalid (saying what is wrong),
// ErrNotOnSale, ErrEventStarted or ErrEventCancelled. It reads the event from
// a per-instance cache at most a second old, so it usually costs no query;
// Place checks the start and the cancellation again, in the database.
func (s *Service) Plan(ctx context.Context, buyerID, eventID string, seatIDs []string, general ...General) (Plan, error) {
	if eventID == "" {
		return Plan{}, invalid("event_id is required")
	}
	evID, ok := ids.Parse(eventID)
	if !ok {
		return Plan{}, invalid("event_id %q is not an event id", eventID)
	}
	places, err := checkGeneral(general)
	if err != nil {
		return Plan{}, err
	}
	if len(general) > 0 && (len(seatIDs)+places < 1 || len(seatIDs)+places > MaxSeats) {
		return Plan{}, invalid("seat_ids and general must ask for 1 to %d seats and places together; they ask for %d", MaxSeats, len(seatIDs)+places)
	}
	if len(general) == 0 && (len(seatIDs) == 0 || len(seatIDs) > MaxSeats) {
		return Plan{}, invalid("seat_ids must list 1 to %d seats; it lists %d, and general asks for no places", MaxSeats, len(seatIDs))
	}
	seen := make(map[string]bool, len(seatIDs))
	canonical := make([]string, len(seatIDs))
	for i, raw := range seatIDs {
		id, ok := ids.Parse(raw)
		if !ok {
			return Plan{}, invalid("seat_ids[%d] %q is not a seat id", i, raw)
		}
		if seen[id] {
			return Plan{}, invalid("seat_ids lists seat %s more than once", id)
		}
		seen[id] = true
		canonical[i] = id
	}
	info, err := s.events.Info(ctx, evID)
	if errors.Is(err, errkind.NotFound) {
		return Plan{}, invalid("event_id %s names no event", evID)
	}
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{BuyerID: buyerID, SeatIDs: canonical, Event: info}
	if plan.General, err = sectionsOf(info, general); err != nil {
		return Plan{}, err
	}
	now := s.now()
	if info.Status == event.Cancelled {
		return Plan{}, errCancelledEvent
	}
	if now.Before(info.OnSaleAt) {
		return Plan{}, fmt.Errorf("%w: the sale opens at %s, in %s", ErrNotOnSale,
			info.OnSaleAt.Format(time.RFC3339), info.OnSaleAt.Sub(now).Round(time.Second))
	}
	if !now.Before(info.StartsAt) {
		return Plan{}, startedError(info.StartsAt)
	}
	return plan, nil
}

// checkGeneral checks what general asks without reading the event: section
// ids, each once, and quantities of 1 to MaxSeats. It returns the places asked
// for in all.
func checkGeneral(general []General) (int, error) {
	seen := make(map[string]bool, len(general))
	places := 0
	for i, g := range general {
		id, ok := ids.Parse(g.SectionID)
		switch {
		case !ok:
			return 0, invalid("general[%d].section_id %q is not a section id", i, g.SectionID)
		case seen[id]:
			return 0, invalid("general names section %s more than once: ask for its places once, with their quantity", id)
		case g.Quantity < 1 || g.Quantity > MaxSeats:
			return 0, invalid("general[%d].quantity must be between 1 and %d; it is %d", i, MaxSeats, g.Quantity)
		}
		seen[id] = true
		places += g.Quantity
	}
	return places, nil
}

// sectionsOf is what general asks of the event's sections, each one a section
// of general admission of the event (checked by checkGeneral before).
func sectionsOf(info event.Info, general []General) ([]SectionPlaces, error) {
	var out []SectionPlaces
	for i, g := range general {
		id, _ := ids.Parse(g.SectionID)
		sec, ok := info.Section(id)
		switch {
		case !ok:
			return nil, invalid("general[%d].section_id %s names no section of event %s", i, id, info.ID)
		case !sec.GeneralAdmission:
			return nil, invalid("general[%d].section_id names %s, a seated section: choose its seats with seat_ids", i, sec.Name)
		}
		out = append(out, SectionPlaces{SectionID: id, Section: sec.Name, Quantity: g.Quantity})
	}
	return out, nil
}

// Place takes every seat of the plan, and the places of general admission it
// asks for, for a new hold, in one transaction, or nothing. A seat (or place)
// is takeable when it is not sold and not held by an unexpired hold; which
// places a hold takes is the placement's choice (docs/design.md, "General
// admission: places taken with SKIP LOCKED"). A *SoldOutError (errors.Is
// ErrSoldOut) when a section had fewer places left than asked for. It returns an *UnavailableError (errors.Is ErrSeatsUnavailable) listing
// exactly the seats that were not takeable, a *TooManyHeldError (errors.Is
// ErrTooManyHeld) when the buyer would hold more seats of the event than the
// cap, a *CooldownError (errors.Is ErrReholdCooldown) when a hold of the same
// buyer gave back some of the seats less than the cooldown ago, or an error
// wrapping errkind.Invalid when some seat ids are not seats of
// the event, or ErrEventStarted when the event has started by the database's
// clock, or ErrEventCancelled when it was cancelled. It is one round trip
// and one transaction: seats already taken when it starts, and an event that
// has started or was cancelled, are refused by the statement's own read,
// before any row is locked. A plan of places costs a second round trip
// and transaction only when the first found too few places free and unlocked.
func (s *Service) Place(ctx context.Context, p Plan) (Hold, error) {
	if len(p.General) > 0 {
		return s.store.placeGeneral(ctx, ids.New(), p, s.ttl, s.maxHeld, s.cooldown)
	}
	return s.store.place(ctx, ids.New(), p, s.ttl, s.maxHeld, s.cooldown)
}

// Get returns the buyer's hold, or an errkind.NotFound error (for another buyer's hold too).
// A hold whose time ran out reads as expired even before the sweeper marks it.
func (s *Service) Get(ctx context.Context, buyerID, holdID string) (Hold, error) {
	id, ok := ids.Parse(holdID)
	if !ok {
		return Hold{}, errNotFound
	}
	h, sections, err := s.store.get(ctx, buyerID, id)
	if err != nil || len(sections) == 0 {
		return h, err
	}
	info, err := s.events.Info(ctx, h.EventID)
	if err != nil {
		return Hold{}, err
	}
	h.General = placesBySection(info, sections)
	return h, nil
}

// placesBySection counts a hold's places by section, in the event's order of
// sections; sections has one name a place.
func placesBySection(info event.Info, sections []string) []SectionPlaces {
	count := make(map[string]int, len(sections))
	for _, name := range sections {
		count[name]++
	}
	var out []SectionPlaces
	for _, sec := range info.Sections {
		if n := count[sec.Name]; n > 0 {
			out = append(out, SectionPlaces{SectionID: sec.ID, Section: sec.Name, Quantity: n})
		}
	}
	return out
}

// Release ends the buyer's active hold and makes its seats available at once
// to everyone but the buyer, who may hold them again after the cooldown.
// Releasing a hold that already expired or was released changes nothing and
// succeeds. It returns an errkind.NotFound error (for another buyer's hold too) or
// ErrNotActive for a hold in checkout or converted into an order.
func (s *Service) Release(ctx context.Context, buyerID, holdID string) error {
	id, ok := ids.Parse(holdID)
	if !ok {
		return errNotFound
	}
	return s.store.release(ctx, buyerID, id)
}

// Sweep marks every active hold whose time has run out as expired, and returns
// how many it marked. Their seats were available from the moment they expired;
// the sweep only keeps the holds' status true.
func (s *Service) Sweep(ctx context.Context) (int64, error) {
	return s.store.sweep(ctx)
}

// EndedRetention is how long a hold that expired or was released is kept, to
// be read back by its buyer, before the janitor may delete it. A hold that
// became an order is kept with it.
const EndedRetention = 7 * 24 * time.Hour

// PurgeEnded deletes up to batch holds that ended more than EndedRetention ago
// without becoming an order, and returns how many. Their seats went back on sale
// when they ended; nothing reads them after.
func (s *Service) PurgeEnded(ctx context.Context, batch int) (int64, error) {
	return s.store.purgeEnded(ctx, EndedRetention, batch)
}

// DefaultSweepEvery is how often serve's sweeper runs.
const DefaultSweepEvery = 5 * time.Second

// RunSweeper sweeps every interval until ctx ends. Its failures are logged as
// the database's outage (a WARN line when they start, a count every 10 s),
// not an ERROR each.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	failures := outage.New(logger, "postgresql", 0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			failures.Failed(fmt.Errorf("hold sweeper: %w", err))
		case err == nil:
			failures.Succeeded()
			if n > 0 {
				logger.Debug("holds expired", "count", n)
			}
		}
	}
}
