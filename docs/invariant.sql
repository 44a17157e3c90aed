-- The money invariant of Stagedoor. Every row is a violation; the truth is no rows.
--
-- Run it against Stagedoor's database when Payrail's ledger (schema payrail) is
-- in it too, as with `make run`, docker compose and the tests:
--     psql "$DATABASE_URL" -f docs/invariant.sql
-- With a real provider, load its charges and refunds into tables of that shape first.
--
-- It holds at every moment for settled orders and refunds. A pending order is a
-- checkout (or recovery) still at work, a pending refund a refund waiting for
-- Payrail's answer; one pending for over 15 minutes is listed, as is a
-- succeeded charge of an order pending that long. A refund made at Payrail by
-- someone else is listed (its order's money disagreeing with Payrail) until
-- reconciliation's next pass has recorded it.
WITH charges AS (
    SELECT c.*, (SELECT count(*) FROM payrail.refunds r WHERE r.charge_id = c.id) AS refunds
    FROM payrail.charges c
), sold AS (
    -- Orders that were paid for: confirmed, and maybe refunded since.
    SELECT o.* FROM orders o WHERE o.status IN ('confirmed', 'partially_refunded', 'refunded')
), settled AS (
    -- Sold orders with no refund waiting for Payrail's answer.
    SELECT o.* FROM sold o
    WHERE NOT EXISTS (SELECT FROM refunds r WHERE r.order_id = o.id AND r.status = 'pending')
), latest AS (
    -- Each seat's newest ticket: the one that says whether the seat is sold.
    SELECT DISTINCT ON (t.seat_id) t.seat_id, t.id, t.refund_status
    FROM tickets t ORDER BY t.seat_id, t.created_at DESC, t.id DESC
)
-- Every sold order has exactly one Payrail charge, succeeded, of which
-- Payrail gave back what the order says it did.
SELECT 'sold order without its one succeeded charge' AS violation, o.id::text AS subject
FROM sold o LEFT JOIN charges c ON c.idempotency_key = o.id::text
WHERE c.id IS NULL OR c.id <> o.charge_id OR c.status <> 'succeeded'
UNION ALL
SELECT o.status || ' order whose refunded money disagrees with Payrail''s', o.id::text
FROM settled o JOIN charges c ON c.idempotency_key = o.id::text
WHERE c.refunded_cents <> o.refunded_cents
UNION ALL
SELECT o.status || ' order whose refunded_cents is not the sum of its succeeded refunds', o.id::text
FROM sold o
WHERE o.refunded_cents <> (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r WHERE r.order_id = o.id AND r.status = 'succeeded')
UNION ALL
-- Its status says what was given back.
SELECT 'confirmed order with a succeeded refund', o.id::text
FROM sold o
WHERE o.status = 'confirmed' AND EXISTS (SELECT FROM refunds r WHERE r.order_id = o.id AND r.status = 'succeeded')
UNION ALL
SELECT 'partially refunded order without a succeeded refund', o.id::text
FROM sold o
WHERE o.status = 'partially_refunded' AND NOT EXISTS (SELECT FROM refunds r WHERE r.order_id = o.id AND r.status = 'succeeded')
UNION ALL
SELECT 'refunded order with money kept or a ticket that admits', o.id::text
FROM sold o
WHERE o.status = 'refunded'
  AND (o.refunded_cents <> o.total_cents OR EXISTS (SELECT FROM tickets t WHERE t.order_id = o.id AND t.revoked_at IS NULL))
UNION ALL
-- ... a ticket for every seat of its hold, and for no other seat.
SELECT o.status || ' order without a ticket for each seat of its hold, and no other', o.id::text
FROM sold o JOIN holds h ON h.id = o.hold_id
CROSS JOIN LATERAL (
    SELECT count(DISTINCT t.seat_id) AS seats, count(*) FILTER (WHERE NOT t.seat_id = ANY (h.seat_ids)) AS others
    FROM tickets t WHERE t.order_id = o.id
) t
WHERE t.seats <> cardinality(h.seat_ids) OR t.others > 0
UNION ALL
SELECT 'ticket of an order that was never sold', t.id::text
FROM tickets t JOIN orders o ON o.id = t.order_id
WHERE o.status NOT IN ('confirmed', 'partially_refunded', 'refunded')
UNION ALL
-- A refunded ticket admits no one: revoked, and on the doors' revocations
-- list; a ticket is refunded exactly when a succeeded refund names it, and
-- pending a refund exactly when a pending one does.
SELECT 'refunded ticket that still admits', t.id::text
FROM tickets t
WHERE t.refund_status = 'refunded'
  AND (t.revoked_at IS NULL OR NOT EXISTS (SELECT FROM ticket_revocations v WHERE v.ticket_id = t.id))
UNION ALL
SELECT 'ticket whose refund state is not its refunds''', t.id::text
FROM tickets t
WHERE t.refund_status IS DISTINCT FROM (
    SELECT CASE WHEN bool_or(r.status = 'pending') THEN 'pending'
                WHEN bool_or(r.status = 'succeeded') THEN 'refunded' END
    FROM refunds r WHERE r.order_id = t.order_id AND t.id = ANY (r.ticket_ids) AND r.status <> 'failed')
UNION ALL
SELECT 'ticket refunded by its buyer or organizer after it was scanned', t.id::text
FROM tickets t JOIN refunds r ON r.order_id = t.order_id AND t.id = ANY (r.ticket_ids)
WHERE r.reason IN ('buyer', 'organizer') AND r.status <> 'failed' AND t.scanned_at IS NOT NULL
UNION ALL
-- A ticket transferred admits no one (revoked, and on the revocations list) and
-- was replaced by exactly one ticket of its seat and order, its receiver's.
SELECT 'transferred ticket that admits, or without one successor', t.id::text
FROM tickets t
WHERE t.transferred_at IS NOT NULL
  AND (t.revoked_at IS NULL OR NOT EXISTS (SELECT 1 FROM ticket_revocations r WHERE r.ticket_id = t.id)
       OR (SELECT count(*) FROM tickets n
           WHERE n.transferred_from = t.id AND n.seat_id = t.seat_id AND n.order_id = t.order_id
             AND n.buyer_id = t.transferred_to) <> 1)
UNION ALL
-- A seat is sold exactly when its newest ticket is not refunded, and has at
-- most one live ticket.
SELECT 'seat sold without a ticket, or refunded and not back on sale', s.id::text
FROM seats s LEFT JOIN latest l ON l.seat_id = s.id
WHERE (s.sold_at IS NOT NULL) <> (l.id IS NOT NULL AND l.refund_status IS DISTINCT FROM 'refunded')
UNION ALL
SELECT 'seat with more than one live ticket', t.seat_id::text
FROM tickets t WHERE t.revoked_at IS NULL GROUP BY t.seat_id HAVING count(*) > 1
UNION ALL
-- Every order agrees with its hold.
SELECT 'order and hold disagree: order ' || o.status || ', hold ' || h.status, o.id::text
FROM orders o JOIN holds h ON h.id = o.hold_id
WHERE (o.status IN ('confirmed', 'partially_refunded', 'refunded') AND h.status <> 'converted')
   OR (o.status = 'pending' AND h.status <> 'checking_out')
   OR (o.status = 'released' AND h.status <> 'released')
UNION ALL
-- Every succeeded charge belongs to a sold order or was given back whole.
SELECT 'succeeded charge of no sold order, not refunded', c.id
FROM charges c LEFT JOIN orders o ON o.id::text = c.idempotency_key
WHERE c.status = 'succeeded' AND c.refunded_cents < c.amount_cents
  AND (o.id IS NULL OR o.status NOT IN ('confirmed', 'partially_refunded', 'refunded'))
  AND NOT (o.status = 'pending' AND o.created_at > now() - interval '15 minutes')
UNION ALL
-- A failed order told its buyer "certainly no charge" (a retry with its key pays
-- again): Payrail must hold no succeeded charge for it, refunded or not.
SELECT 'failed order ("certainly no charge") that Payrail charged', o.id::text
FROM orders o JOIN charges c ON c.idempotency_key = o.id::text
WHERE o.status = 'failed' AND c.status = 'succeeded'
UNION ALL
-- A refund of an unsold order's charge is recorded on it.
SELECT 'refunded charge not recorded on its order', c.id
FROM charges c JOIN orders o ON o.id::text = c.idempotency_key
WHERE c.refunds > 0 AND o.status NOT IN ('pending', 'confirmed', 'partially_refunded', 'refunded')
  AND (o.refund_id IS NULL OR NOT EXISTS (SELECT FROM payrail.refunds r WHERE r.id = o.refund_id AND r.charge_id = c.id))
UNION ALL
-- A succeeded refund is Payrail's (of its order's charge, of its amount), and
-- a failed one ("nothing was refunded") is not: Payrail holds no refund with
-- its key.
SELECT 'succeeded refund that Payrail does not hold', r.id::text
FROM refunds r JOIN orders o ON o.id = r.order_id
LEFT JOIN payrail.refunds p ON p.id = r.payrail_refund_id
WHERE r.status = 'succeeded' AND NOT (r.amount_cents = 0 AND r.payrail_refund_id IS NULL)
  AND (p.id IS NULL OR p.charge_id <> o.charge_id OR p.amount_cents <> r.amount_cents)
UNION ALL
SELECT 'failed refund that Payrail made', r.id::text
FROM refunds r JOIN payrail.refunds p ON p.refund_key = r.id::text
WHERE r.status = 'failed'
UNION ALL
SELECT 'refund pending for over 15 minutes', r.id::text
FROM refunds r WHERE r.status = 'pending' AND r.created_at < now() - interval '15 minutes'
UNION ALL
-- A cancelled event's cancellation refunds every order of it; once it is
-- done, no order of it is sold and not refunded, and none can still be.
SELECT 'cancelled event without its cancellation', e.id::text
FROM events e WHERE e.status = 'cancelled' AND NOT EXISTS (SELECT FROM event_cancellations c WHERE c.event_id = e.id)
UNION ALL
SELECT 'order of a cancelled event that is done, not refunded', o.id::text
FROM event_cancellations c JOIN orders o ON o.event_id = c.event_id
WHERE c.done_at IS NOT NULL AND o.status IN ('pending', 'confirmed', 'partially_refunded')
UNION ALL
SELECT 'order pending for over 15 minutes', o.id::text
FROM orders o
WHERE o.status = 'pending' AND o.created_at < now() - interval '15 minutes';
