package hold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/event"
)

// store is the SQL of holds and of the seats they take. Ids reaching it are
// valid UUIDs, so PostgreSQL never sees a malformed one.
type store struct {
	db *pgxpool.Pool
}

// placeSQL places a hold in one statement, sent in one batch after
// lockBuyerSQL: one round trip, one implicit transaction:
//
//   - peek reads every seat asked for without a lock: whether it is a seat of
//     the event (a place of general admission is not) and takeable in the
//     statement's snapshot, and ev whether the event has
//     started by the database's clock. When some seat is not takeable, or the
//     event has started, the statement locks no row and writes nothing: a
//     refusal (409 on a seat already taken) never queues on a hot seat's row
//     lock;
//   - only when every seat looks free, wanted locks them, in id order (so two
//     placements never deadlock), and reads, from the newest committed version
//     of each row, whether it is of the event and takeable now: the lock is the
//     arbiter, the peek only spares refusals the queue;
//   - cooling lists the seats asked for that a hold of the same buyer on the
//     event released or let expire less than the cooldown ($8 seconds) ago,
//     with when the buyer may hold each again; when there are any, nothing is
//     locked or written (other buyers may hold them meanwhile). A hold that
//     went to checkout (an order names it) never cools: a payment declined,
//     or an order released by recovery, is no buyer's trick;
//   - held counts the seats the buyer holds of the event now (in a checkout
//     too), which with those asked for may not pass the cap ($7);
//   - only when all are found, of the event and takeable, and the cap allows,
//     taken points them at the new hold until now() + TTL (the rows wanted
//     locked), and hold inserts it;
//     otherwise nothing is written;
//   - the result lists each seat found with those two verdicts (the locked
//     read's when there was one, else the peek's), the count held, and the
//     seconds until the buyer may hold it again if it is cooling, which is
//     exactly what a refusal reports.
//
// peek and wanted filter on id alone, so that the primary key is the only index
// the planner can use: a filter on event_id invites a scan of all the event's
// seats. Rows are locked only while the statement runs; no event-wide lock is
// taken. Two placements of one buyer on one event are serialized by
// lockBuyerSQL, sent before it in the same transaction, so that each counts the
// other's seats. A release racing a placement of its buyer cannot let the
// placement past the cooldown: it frees the seats and marks its hold released
// in one transaction, and the placement reads both in one snapshot (peek and
// cooling), so it finds the seats still held or the hold cooling.
var (
	placeSQL           = placeStatement(true)
	placeNoCooldownSQL = placeStatement(false)
)

// placeStatement is placeSQL, with cooling when cooled (its parameters $1 to
// $8), or without it (its parameters $1 to $7; the seconds until the buyer may
// hold a seat again NULL), for a Service whose cooldown is 0 (the default):
// the cooling CTE, even when its filter is false, costs each execution the
// start and end of its scans, its aggregate and its join (the executor's start
// of this statement's plan is a quarter of a placement's CPU in PostgreSQL).
// taken updates the seats asked for, not those of wanted: when ok holds, they
// are the same rows, every one found and locked by wanted, and the semi-join
// with wanted would cost a hash of its rows. For the same reason the result
// reads wanted's verdict of a seat by a subquery rather than a hash join; a
// seat's event never changes, so the peek's of_event is the locked read's.
func placeStatement(cooled bool) string {
	return placePrefix(cooled, false) + wantedCTE + `
), ` + heldCTE + `
), verdict AS (
    SELECT count(*) = cardinality($4::uuid[]) AND coalesce(bool_and(of_event AND takeable), false)
               AND (SELECT seats FROM held) + cardinality($4::uuid[]) <= $7 AS ok,
           coalesce(sum(price_cents), 0) AS total
    FROM wanted
), taken AS (
    UPDATE seats SET hold_id = $1, held_until = now() + $6::float8 * interval '1 second'
    WHERE id = ANY($4::uuid[]) AND (SELECT ok FROM verdict)
    RETURNING id
), hold AS (
    INSERT INTO holds (id, event_id, buyer_id, seat_ids, total_cents, currency, expires_at)
    SELECT $1, $2, $3, $4::uuid[], total, $5, now() + $6::float8 * interval '1 second'
    FROM verdict WHERE ok
    RETURNING total_cents, expires_at, created_at
)
SELECT p.id::text, NULL::text, p.of_event, coalesce((SELECT w.takeable FROM wanted w WHERE w.id = p.id), p.takeable),
       NULL::int, (SELECT seats FROM held), h.total_cents, h.expires_at, h.created_at, NULL::text[],
       ` + coolingFor(cooled) + `, ev.starts_at, coalesce(ev.started, false), coalesce(ev.cancelled, false)
FROM peek p LEFT JOIN hold h ON true` + joinCooling(cooled, "p.id") + `
     LEFT JOIN ev ON true`
}

// free is whether a row of seats, a seat or a place, can be taken now: not
// sold, and not held by a hold that has not expired.
const free = `sold_at IS NULL AND (held_until IS NULL OR held_until <= now())`

// placePrefix is the start of a placement's statement, up to its looks_free
// CTE (left open): peek, cooling when cooled, ev and looks_free. A place named
// among the seats is not a seat of the event (of_event false). When no seat is
// asked for, the seats look free when noSeatsLookFree.
func placePrefix(cooled, noSeatsLookFree bool) string {
	cooling, notCooling := "", ""
	if cooled {
		cooling = `
), cooling AS (
    SELECT s.id, max(coalesce(h.ended_at, h.expires_at)) + $8::float8 * interval '1 second' AS until
    FROM holds h CROSS JOIN LATERAL unnest(h.seat_ids) AS s(id)
    WHERE $8::float8 > 0 AND h.buyer_id = $3 AND h.event_id = $2 AND h.seat_ids && $4::uuid[]
      AND s.id = ANY($4::uuid[])
      AND (h.status IN ('released', 'expired') OR (h.status = 'active' AND h.expires_at <= now()))
      AND coalesce(h.ended_at, h.expires_at) > now() - $8::float8 * interval '1 second'
      AND NOT EXISTS (SELECT FROM orders o WHERE o.hold_id = h.id)
    GROUP BY s.id`
		notCooling = `
           AND NOT EXISTS (SELECT FROM cooling)`
	}
	return `
WITH peek AS (
    SELECT id, event_id = $2 AND row_label <> '' AS of_event, ` + free + ` AS takeable
    FROM seats
    WHERE id = ANY($4::uuid[])` + cooling + `
), ev AS (
    SELECT starts_at, starts_at <= now() AS started, status = 'cancelled' AS cancelled FROM events WHERE id = $2
), looks_free AS (
    SELECT count(*) = cardinality($4::uuid[]) AND coalesce(bool_and(of_event AND takeable), ` + fmt.Sprint(noSeatsLookFree) + `)` + notCooling + `
           AND NOT coalesce((SELECT started OR cancelled FROM ev), true) AS yes
    FROM peek`
}

// wantedCTE locks the seats asked for, in id order, when they look free, and
// reads whether each is a seat of the event and takeable, from its newest
// version.
const wantedCTE = `
), wanted AS (
    SELECT id, price_cents, event_id = $2 AND row_label <> '' AS of_event, ` + free + ` AS takeable
    FROM seats
    WHERE id = ANY($4::uuid[]) AND (SELECT yes FROM looks_free)
    ORDER BY id
    FOR NO KEY UPDATE`

// heldCTE counts the seats and places the buyer holds of the event now, active
// or in a checkout.
const heldCTE = `held AS (
    SELECT coalesce(sum(cardinality(seat_ids)), 0)::int AS seats
    FROM holds
    WHERE buyer_id = $3 AND event_id = $2
      AND (status = 'checking_out' OR (status = 'active' AND expires_at > now()))`

// coolingFor is the result's column of the seconds until the buyer may hold a
// seat again, when cooled.
func coolingFor(cooled bool) string {
	if cooled {
		return `extract(epoch FROM c.until - now())::float8`
	}
	return `NULL::float8`
}

// joinCooling joins the result's seat (id, a uuid) to cooling, when cooled.
func joinCooling(cooled bool, id string) string {
	if cooled {
		return ` LEFT JOIN cooling c ON c.id = ` + id
	}
	return ""
}

// lockBuyerSQL takes a transaction-scoped lock on one buyer's holds of one
// event. Sent in one batch with placeSQL (one round trip, one implicit
// transaction), it makes racing placements of that buyer on that event count
// their seats one after the other, so together they never pass the cap. A
// statement's snapshot is taken when it starts, so the lock must be taken by a
// statement of its own, before. It also sets genericPlans for the transaction.
const lockBuyerSQL = `SELECT pg_advisory_xact_lock(hashtextextended('hold:' || $1::text || ':' || $2::text, 0)), ` + genericPlans

// genericPlans makes the statements after it in its transaction run the
// generic plan of their prepared statement (pgx prepares each one). Left to
// itself PostgreSQL plans placeSQL anew at every execution (its generic plan's
// estimate never beats a custom one's), which cost more than running it:
// 0.37 ms of planning against 0.21 ms of execution with the generic plan,
// which finds every row by the same indexes. set_config(…, true) lasts until
// the transaction ends, which for a batch is its end.
const genericPlans = `set_config('plan_cache_mode', 'force_generic_plan', true)`

// verdict is what a statement read of one seat asked for.
type verdict struct{ ofEvent, takeable bool }

// refusal is the error for the seats of p as found says they are, the
// foreign seats first, then the unavailable ones; nil when all are of the
// event and takeable.
func refusal(p Plan, found map[string]verdict) error {
	var foreign, unavailable []string
	for _, id := range p.SeatIDs {
		switch v, ok := found[id]; {
		case !ok || !v.ofEvent:
			foreign = append(foreign, id)
		case !v.takeable:
			unavailable = append(unavailable, id)
		}
	}
	switch {
	case len(foreign) > 0:
		return invalid("seat_ids %s are not seats of event %s", strings.Join(foreign, ", "), p.Event.ID)
	case len(unavailable) > 0:
		return &UnavailableError{SeatIDs: unavailable}
	}
	return nil
}

// place runs lockBuyerSQL and placeSQL in one batch: a hold placed or refused
// is one round trip to PostgreSQL and one transaction.
func (s store) place(ctx context.Context, holdID string, p Plan, ttl time.Duration, maxHeld int, cooldown time.Duration) (Hold, error) {
	args := []any{holdID, p.Event.ID, p.BuyerID, p.SeatIDs, p.Event.Currency, ttl.Seconds(), maxHeld}
	statement := placeNoCooldownSQL
	if cooldown > 0 {
		statement, args = placeSQL, append(args, cooldown.Seconds())
	}
	o, err := s.run(ctx, p, statement, args)
	if err != nil {
		return Hold{}, err
	}
	return o.judge(holdID, p, maxHeld)
}

// outcome is what a placement's statement answered.
type outcome struct {
	placed    bool
	hold      Hold               // when placed: its total, expiry, creation and (of places) seats
	found     map[string]verdict // each seat asked for that exists
	left      map[string]int     // each section of places asked for: how many it found
	held      int                // seats and places the buyer held of the event
	started   *time.Time         // when the event has started: its start
	cancelled bool               // the event was cancelled
	cooling   *CooldownError
}

// run runs lockBuyerSQL and a placement's statement in one batch (one round
// trip, one implicit transaction) and reads its rows: one a seat asked for,
// then one a section of places asked for.
func (s store) run(ctx context.Context, p Plan, statement string, args []any) (outcome, error) {
	batch := &pgx.Batch{}
	batch.Queue(lockBuyerSQL, p.BuyerID, p.Event.ID)
	batch.Queue(statement, args...)
	results := s.db.SendBatch(ctx, batch)
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return outcome{}, fmt.Errorf("hold: place: lock the buyer's holds: %w", err)
	}
	rows, err := results.Query()
	if err != nil {
		return outcome{}, fmt.Errorf("hold: place: %w", err)
	}
	defer rows.Close()
	o := outcome{found: make(map[string]verdict, len(p.SeatIDs)), left: map[string]int{}, cooling: &CooldownError{}}
	for rows.Next() {
		var (
			seat, section *string
			v             verdict
			found         *int32
			total         *int64
			expiresAt     *time.Time
			createdAt     *time.Time
			seatIDs       []string
			coolFor       *float64
			startsAt      *time.Time
			started       bool
			cancelled     bool
		)
		if err := rows.Scan(&seat, &section, &v.ofEvent, &v.takeable, &found, &o.held, &total, &expiresAt, &createdAt,
			&seatIDs, &coolFor, &startsAt, &started, &cancelled); err != nil {
			return outcome{}, fmt.Errorf("hold: place: %w", err)
		}
		switch {
		case seat != nil:
			o.found[*seat] = v
		case section != nil && found != nil:
			o.left[*section] = int(*found)
		}
		if coolFor != nil && seat != nil {
			o.cooling.SeatIDs = append(o.cooling.SeatIDs, *seat)
			o.cooling.RetryAfter = max(o.cooling.RetryAfter, time.Duration(*coolFor*float64(time.Second)))
		}
		if total != nil {
			o.placed = true
			o.hold = Hold{SeatIDs: seatIDs, TotalCents: *total, ExpiresAt: expiresAt.UTC(), CreatedAt: createdAt.UTC()}
		}
		if started {
			o.started = startsAt
		}
		o.cancelled = o.cancelled || cancelled
	}
	if err := rows.Err(); err != nil {
		return outcome{}, fmt.Errorf("hold: place: %w", err)
	}
	return o, nil
}

// judge is the hold placed, or the error that says why not, by priority: the
// event cancelled, the event started, seats not of the event, seats cooling for the buyer, the cap,
// seats taken, sections of places short.
func (o outcome) judge(holdID string, p Plan, maxHeld int) (Hold, error) {
	if o.placed {
		h := Hold{ID: holdID, EventID: p.Event.ID, BuyerID: p.BuyerID, SeatIDs: p.SeatIDs, General: p.General,
			Status: Active, TotalCents: o.hold.TotalCents, Currency: p.Event.Currency,
			ExpiresAt: o.hold.ExpiresAt, CreatedAt: o.hold.CreatedAt}
		if o.hold.SeatIDs != nil {
			h.SeatIDs = o.hold.SeatIDs
		}
		return h, nil
	}
	if o.cancelled {
		return Hold{}, errCancelledEvent
	}
	if o.started != nil {
		// A placement that passes this read as the event starts may still
		// hold; checkout (BeginCheckout) refuses to sell it.
		return Hold{}, startedError(*o.started)
	}
	err := refusal(p, o.found)
	switch {
	case errors.Is(err, errkind.Invalid):
		return Hold{}, err
	case err == nil && len(o.cooling.SeatIDs) > 0:
		o.cooling.SeatIDs = inOrder(p.SeatIDs, o.cooling.SeatIDs)
		return Hold{}, o.cooling
	case o.held+p.size() > maxHeld:
		return Hold{}, &TooManyHeldError{Max: maxHeld, Held: o.held, Asked: p.size()}
	case err != nil:
		return Hold{}, err
	}
	if short := o.short(p); short != nil {
		return Hold{}, short
	}
	return Hold{}, errors.New("hold: place: every seat was takeable but no hold was written")
}

// inOrder is those of ids (a subset) in the order of ids.
func inOrder(ids, those []string) []string {
	out := make([]string, 0, len(those))
	for _, id := range ids {
		for _, t := range those {
			if t == id {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// get reads a hold of the buyer, with the section of each of its places. An
// active hold past its expiry reads as expired.
func (s store) get(ctx context.Context, buyerID, holdID string) (Hold, []string, error) {
	var h Hold
	var sections []string
	err := s.db.QueryRow(ctx, `
		SELECT h.id::text, h.event_id::text, h.buyer_id::text, h.seat_ids::text[],
		       CASE WHEN h.status = 'active' AND h.expires_at <= now() THEN 'expired' ELSE h.status END,
		       h.total_cents, h.currency, h.expires_at, h.created_at,
		       ARRAY(SELECT s.section FROM seats s WHERE s.id = ANY(h.seat_ids) AND s.row_label = '')
		FROM holds h WHERE h.id = $1 AND h.buyer_id = $2`, holdID, buyerID).
		Scan(&h.ID, &h.EventID, &h.BuyerID, &h.SeatIDs, &h.Status,
			&h.TotalCents, &h.Currency, &h.ExpiresAt, &h.CreatedAt, &sections)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, nil, errNotFound
	}
	if err != nil {
		return Hold{}, nil, fmt.Errorf("hold: get: %w", err)
	}
	h.ExpiresAt, h.CreatedAt = h.ExpiresAt.UTC(), h.CreatedAt.UTC()
	return h, sections, nil
}

// release marks an active, unexpired hold released and frees the seats it
// still owns, locking them in id order as placing does.
func (s store) release(ctx context.Context, buyerID, holdID string) error {
	var released int
	// No set_config(plan_cache_mode) before it: PostgreSQL runs this
	// statement's generic plan of its own accord (its custom plans cost the
	// same), so it is planned once a connection. freed joins mine rather than
	// reading id IN (SELECT id FROM mine): its ids are distinct (one row a
	// seat), so the HashAggregate that IN puts before the join has nothing to
	// remove.
	err := s.db.QueryRow(ctx, `
		WITH h AS (
		    UPDATE holds SET status = 'released', ended_at = now()
		    WHERE id = $1 AND buyer_id = $2 AND status = 'active' AND expires_at > now()
		    RETURNING id, seat_ids
		), mine AS (
		    SELECT s.id FROM seats s, h
		    WHERE s.id = ANY(h.seat_ids) AND s.hold_id = h.id AND s.sold_at IS NULL
		    ORDER BY s.id
		    FOR NO KEY UPDATE OF s
		), freed AS (
		    UPDATE seats SET hold_id = NULL, held_until = NULL
		    FROM mine WHERE seats.id = mine.id
		)
		SELECT count(*) FROM h`, holdID, buyerID).Scan(&released)
	if err != nil {
		return fmt.Errorf("hold: release: %w", err)
	}
	if released == 1 {
		return nil
	}
	// Nothing to release: say why.
	var status string
	err = s.db.QueryRow(ctx, `SELECT status FROM holds WHERE id = $1 AND buyer_id = $2`, holdID, buyerID).Scan(&status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errNotFound
	case err != nil:
		return fmt.Errorf("hold: release: %w", err)
	case Status(status) == CheckingOut:
		return fmt.Errorf("%w: it is being checked out", ErrNotActive)
	case Status(status) == Converted:
		return fmt.Errorf("%w: it was converted into an order", ErrNotActive)
	}
	return nil // already expired or released: its seats are available
}

// sweepBatch bounds one sweeping statement, so that it never holds many locks.
const sweepBatch = 1000

func (s store) sweep(ctx context.Context) (int64, error) {
	var total int64
	for {
		tag, err := s.db.Exec(ctx, `
			UPDATE holds SET status = 'expired', ended_at = expires_at
			WHERE id IN (
			    SELECT id FROM holds
			    WHERE status = 'active' AND expires_at <= now()
			    ORDER BY expires_at LIMIT $1
			    FOR UPDATE SKIP LOCKED
			)`, sweepBatch)
		if err != nil {
			return total, fmt.Errorf("hold: sweep: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < sweepBatch {
			return total, nil
		}
	}
}

// purgeEnded deletes up to batch holds that expired or were released more than
// retention ago and that no order names.
func (s store) purgeEnded(ctx context.Context, retention time.Duration, batch int) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM holds WHERE id IN (
			SELECT h.id FROM holds h
			WHERE h.status IN ('expired', 'released')
			  AND h.ended_at < now() - $2::bigint * interval '1 microsecond'
			  AND NOT EXISTS (SELECT FROM orders o WHERE o.hold_id = h.id)
			LIMIT $1
			FOR UPDATE SKIP LOCKED)`, batch, retention.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("hold: purge ended holds: %w", err)
	}
	return tag.RowsAffected(), nil
}

// CreateSeats stores a new event's seats, in the order given (their position
// on the seat map), in tx: internal/event's transaction that stores the event
// (event.NewService is given it). The seats table is this package's: a
// placement reads and takes seats and writes its hold in one statement.
func CreateSeats(ctx context.Context, tx pgx.Tx, eventID string, seats []event.NewSeat) error {
	sections, labels := make([]string, len(seats)), make([]string, len(seats))
	numbers, prices := make([]int32, len(seats)), make([]int64, len(seats))
	for i, s := range seats {
		sections[i], labels[i], numbers[i], prices[i] = s.Section, s.Row, int32(s.Number), s.PriceCents
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO seats (id, event_id, position, section, row_label, number, price_cents)
		SELECT gen_random_uuid(), $1, t.p - 1, t.section, t.label, t.number, t.price
		FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[])
		     WITH ORDINALITY AS t(section, label, number, price, p)`,
		eventID, sections, labels, numbers, prices)
	if err != nil {
		return fmt.Errorf("hold: create the seats of event %s: %w", eventID, err)
	}
	return nil
}
