package hold

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The SQL of a placement that takes places of general admission, with or
// without seats (docs/design.md, "General admission: places taken with SKIP
// LOCKED", says why it is built so).
//
// A section of general admission of capacity N has N places, rows of seats
// with row label "" numbered 1..N. A hold asks for a quantity of them, not for
// ids: the placement chooses. In its first try, for each section asked for, it
// takes the first free places from a random number on (then wrapping round to
// 1), in number order, skipping the rows other transactions have locked (FOR
// NO KEY UPDATE SKIP LOCKED): buyers racing for one section start at different
// places and never wait for each other, so no row is hot. When that finds
// fewer places free and unlocked than asked for, the locked ones may still be
// freed (their placement refused for another reason, or rolled back), so the
// placement tries once more, waiting this time: it locks every place of those
// sections that looks free, with the seats asked for, in id order (as every
// statement locking several seats does, so none deadlocks), and judges each by
// its newest version. Only that second try says sold out, and how many places
// were left.

// placeGeneralSQL are the statements of a placement of places, by whether the
// Service has a cooldown and whether the try waits for locked places.
var placeGeneralSQL = [2][2]string{
	{placeGeneralStatement(false, false), placeGeneralStatement(false, true)},
	{placeGeneralStatement(true, false), placeGeneralStatement(true, true)},
}

// b is 1 for true, as an index.
func b(v bool) int {
	if v {
		return 1
	}
	return 0
}

// placeGeneralStatement is the statement of one try of a placement of places:
// placeStatement's parameters ($1 to $7, and $8 when cooled), then the
// sections' names, the quantities asked for and each section's random first
// number, as arrays, in the order asked. Its rows: one a seat asked for (as
// placeStatement's), then one a section of places, with how many places it
// found (the try that waits: how many were free).
func placeGeneralStatement(cooled, wait bool) string {
	n := 8
	if cooled {
		n = 9
	}
	take := skipLockedPlaces
	if wait {
		take = waitForPlaces
	}
	return placePrefix(cooled, true) + fmt.Sprintf(`
), asked AS (
    SELECT g.name, g.quantity, g.start, g.i
    FROM unnest($%d::text[], $%d::int[], $%d::int[]) WITH ORDINALITY AS g(name, quantity, start, i)`, n, n+1, n+2) + take + `
), ` + heldCTE + `
), verdict AS (
    SELECT count(*) = cardinality($4::uuid[]) AND coalesce(bool_and(of_event AND takeable), true)
               AND (SELECT seats FROM held) + cardinality($4::uuid[]) + (SELECT sum(quantity) FROM asked) <= $7
               AND NOT EXISTS (SELECT FROM counted WHERE found < quantity) AS ok,
           coalesce(sum(price_cents), 0) + (SELECT coalesce(sum(price_cents), 0) FROM got) AS total
    FROM wanted
), taken AS (
    UPDATE seats SET hold_id = $1, held_until = now() + $6::float8 * interval '1 second'
    WHERE id = ANY($4::uuid[] || ARRAY(SELECT id FROM got)) AND (SELECT ok FROM verdict)
    RETURNING id
), hold AS (
    INSERT INTO holds (id, event_id, buyer_id, seat_ids, total_cents, currency, expires_at)
    SELECT $1, $2, $3, $4::uuid[] || ARRAY(SELECT id FROM got ORDER BY i, number), total, $5,
           now() + $6::float8 * interval '1 second'
    FROM verdict WHERE ok
    RETURNING total_cents, expires_at, created_at, seat_ids
)
SELECT x.seat::text, x.section, x.of_event, x.takeable, x.found, (SELECT seats FROM held),
       h.total_cents, h.expires_at, h.created_at, h.seat_ids::text[],
       ` + coolingFor(cooled) + `, ev.starts_at, coalesce(ev.started, false), coalesce(ev.cancelled, false)
FROM (
    SELECT p.id AS seat, NULL::text AS section, p.of_event,
           coalesce((SELECT w.takeable FROM wanted w WHERE w.id = p.id), p.takeable) AS takeable, NULL::int AS found
    FROM peek p
    UNION ALL
    SELECT NULL, c.name, true, c.found >= c.quantity, c.found FROM counted c
) x LEFT JOIN hold h ON true` + joinCooling(cooled, "x.seat") + `
     LEFT JOIN ev ON true`
}

// skipLockedPlaces are the CTEs of the first try: wanted locks the seats asked
// for, as placeStatement's does; then, only once it holds them all and they
// are all takeable (seated: which reads wanted whole, so no place is locked
// before every seat is), got takes, for each section asked for, its first free
// places from its random number on, then from 1, skipping locked rows. A try
// that skips never waits for a place, and waits for seats only before it holds
// any place: it cannot deadlock with a try that waits (whose locks are taken in
// id order). Nothing is locked unless the seats look free and the event has
// neither started nor been cancelled (looks_free).
var skipLockedPlaces = wantedCTE + `
), seated AS (
    SELECT (SELECT yes FROM looks_free) AND count(*) = cardinality($4::uuid[])
           AND coalesce(bool_and(of_event AND takeable), true) AS yes FROM wanted
), got AS (
    SELECT a.i, p.id, p.number, p.price_cents
    FROM asked a CROSS JOIN LATERAL (
        SELECT * FROM (` + freePlaces(">=") + `) up
        UNION ALL
        SELECT * FROM (` + freePlaces("<") + `) down
        LIMIT a.quantity
    ) p
), counted AS (
    SELECT a.name, a.quantity, (SELECT count(*) FROM got g WHERE g.i = a.i)::int AS found FROM asked a`

// freePlaces is the first free places of section a, in number order, whose
// number is cmp a's start, skipping locked rows: at most a.quantity.
func freePlaces(cmp string) string {
	return `
            SELECT id, number, price_cents FROM seats
            WHERE event_id = $2 AND section = a.name AND row_label = '' AND number ` + cmp + ` a.start
              AND ` + free + ` AND (SELECT yes FROM seated)
            ORDER BY number LIMIT a.quantity
            FOR NO KEY UPDATE SKIP LOCKED
        `
}

// waitForPlaces are the CTEs of the try that waits: locked locks the seats
// asked for and every place of the sections asked for that looks free, in id
// order, waiting for the transactions that hold them, and reads each one's
// newest version; got takes the first of each section's free ones by id, and
// counted says how many were free.
const waitForPlaces = `
), candidates AS (
    SELECT s.id FROM asked a JOIN seats s ON s.event_id = $2 AND s.section = a.name AND s.row_label = ''
    WHERE ` + free + ` AND (SELECT yes FROM looks_free)
), locked AS (
    SELECT id, section, row_label, number, price_cents, event_id = $2 AND row_label <> '' AS of_event,
           ` + free + ` AS takeable
    FROM seats
    WHERE id IN (SELECT unnest($4::uuid[]) UNION SELECT id FROM candidates) AND (SELECT yes FROM looks_free)
    ORDER BY id
    FOR NO KEY UPDATE
), wanted AS (
    SELECT id, price_cents, of_event, takeable FROM locked WHERE id = ANY($4::uuid[])
), ranked AS (
    SELECT a.i, l.id, l.number, l.price_cents, row_number() OVER (PARTITION BY a.i ORDER BY l.id) AS r
    FROM locked l JOIN asked a ON a.name = l.section
    WHERE l.row_label = '' AND l.takeable
), got AS (
    SELECT r.i, r.id, r.number, r.price_cents FROM ranked r JOIN asked a ON a.i = r.i WHERE r.r <= a.quantity
), counted AS (
    SELECT a.name, a.quantity, (SELECT count(*) FROM ranked r WHERE r.i = a.i)::int AS found FROM asked a`

// placeGeneral places a hold of places (and seats): the first try skips
// locked places; when it finds too few, and nothing else refuses the hold,
// the second waits for them, and its answer is final.
func (s store) placeGeneral(ctx context.Context, holdID string, p Plan, ttl time.Duration, maxHeld int, cooldown time.Duration) (Hold, error) {
	names, quantities, starts := make([]string, len(p.General)), make([]int32, len(p.General)), make([]int32, len(p.General))
	for i, g := range p.General {
		sec, _ := p.Event.Section(g.SectionID)
		names[i], quantities[i], starts[i] = g.Section, int32(g.Quantity), int32(1+rand.IntN(max(sec.Capacity, 1)))
	}
	args := []any{holdID, p.Event.ID, p.BuyerID, p.SeatIDs, p.Event.Currency, ttl.Seconds(), maxHeld}
	if cooldown > 0 {
		args = append(args, cooldown.Seconds())
	}
	args = append(args, names, quantities, starts)
	statements := placeGeneralSQL[b(cooldown > 0)]
	o, err := s.run(ctx, p, statements[0], args)
	if err != nil {
		return Hold{}, err
	}
	if h, err := o.judge(holdID, p, maxHeld); !errors.Is(err, ErrSoldOut) {
		return h, err
	}
	if o, err = s.run(ctx, p, statements[1], args); err != nil {
		return Hold{}, err
	}
	return o.judge(holdID, p, maxHeld)
}

// short is the sections of places of p that the statement found too few
// places of, or nil.
func (o outcome) short(p Plan) error {
	var sold SoldOutError
	for _, g := range p.General {
		if left := o.left[g.Section]; left < g.Quantity {
			sold.Sections = append(sold.Sections, Short{SectionID: g.SectionID, Section: g.Section, Asked: g.Quantity, Available: left})
		}
	}
	if sold.Sections == nil {
		return nil
	}
	return &sold
}
