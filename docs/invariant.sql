-- The money invariant of Stagedoor. Every row is a violation; the truth is no rows.
--
-- Run it against Stagedoor's database when Payrail's ledger (schema payrail) is
-- in it too, as with `make run`, docker compose and the tests:
--     psql "$DATABASE_URL" -f docs/invariant.sql
-- With a real provider, load its charges into a table of that shape first.
--
-- It holds at every moment for settled orders. A pending order is a checkout
-- (or recovery) still at work; one pending for over 15 minutes is listed, as
-- is a succeeded charge of an order pending that long. A charge refunded at
-- Payrail is listed (its order still confirmed, its tickets still admitting)
-- until reconciliation's next pass has made the order refunded.
WITH confirmed_seats AS (
    SELECT unnest(h.seat_ids) AS seat_id, o.id AS order_id
    FROM orders o JOIN holds h ON h.id = o.hold_id
    WHERE o.status IN ('confirmed', 'refunded') -- a refunded order's seats stay sold
)
-- Every confirmed order has exactly one Payrail charge, succeeded, not refunded.
SELECT 'confirmed order without its one succeeded charge' AS violation, o.id::text AS subject
FROM orders o LEFT JOIN payrail.charges c ON c.idempotency_key = o.id::text
WHERE o.status = 'confirmed'
  AND (c.id IS NULL OR c.id <> o.charge_id OR c.status <> 'succeeded' OR c.refund_id IS NOT NULL)
UNION ALL
-- ... and one ticket per seat of its hold, and no other (a refunded order keeps them;
-- a ticket transferred counts as the one that replaced it).
SELECT o.status || ' order without one ticket per seat', o.id::text
FROM orders o JOIN holds h ON h.id = o.hold_id
CROSS JOIN LATERAL (
    SELECT count(*) AS n, count(*) FILTER (WHERE t.seat_id = ANY (h.seat_ids)) AS of_hold
    FROM tickets t WHERE t.order_id = o.id AND t.transferred_at IS NULL
) t
WHERE o.status IN ('confirmed', 'refunded') AND (t.n <> cardinality(h.seat_ids) OR t.of_hold <> t.n)
UNION ALL
SELECT 'ticket of an order that is neither confirmed nor refunded', t.id::text
FROM tickets t JOIN orders o ON o.id = t.order_id
WHERE o.status NOT IN ('confirmed', 'refunded')
UNION ALL
-- A refunded order's charge is refunded at Payrail, and its tickets admit no
-- one: revoked, and on the doors' revocations list.
SELECT 'refunded order whose charge Payrail did not refund', o.id::text
FROM orders o LEFT JOIN payrail.charges c ON c.idempotency_key = o.id::text
WHERE o.status = 'refunded'
  AND (c.id IS NULL OR c.id <> o.charge_id OR c.refund_id IS DISTINCT FROM o.refund_id)
UNION ALL
SELECT 'ticket of a refunded order that still admits', t.id::text
FROM tickets t JOIN orders o ON o.id = t.order_id
WHERE o.status = 'refunded'
  AND (t.revoked_at IS NULL OR NOT EXISTS (SELECT 1 FROM ticket_revocations r WHERE r.ticket_id = t.id))
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
-- Every seat is sold to at most one order, and a seat is sold exactly when it has a ticket.
SELECT 'seat sold to more than one order', seat_id::text
FROM confirmed_seats GROUP BY seat_id HAVING count(*) > 1
UNION ALL
SELECT 'seat sold without a ticket, or a ticket for a seat not sold', s.id::text
FROM seats s LEFT JOIN tickets t ON t.seat_id = s.id
WHERE (s.sold_at IS NOT NULL) <> (t.id IS NOT NULL)
UNION ALL
-- Every order agrees with its hold.
SELECT 'order and hold disagree: order ' || o.status || ', hold ' || h.status, o.id::text
FROM orders o JOIN holds h ON h.id = o.hold_id
WHERE (o.status IN ('confirmed', 'refunded') AND h.status <> 'converted')
   OR (o.status = 'pending' AND h.status <> 'checking_out')
   OR (o.status = 'released' AND h.status <> 'released')
UNION ALL
-- Every succeeded charge belongs to a confirmed order or has a refund.
SELECT 'succeeded charge of no confirmed order, not refunded', c.id
FROM payrail.charges c LEFT JOIN orders o ON o.id::text = c.idempotency_key
WHERE c.status = 'succeeded' AND c.refund_id IS NULL
  AND (o.id IS NULL OR o.status <> 'confirmed')
  AND NOT (o.status = 'pending' AND o.created_at > now() - interval '15 minutes')
UNION ALL
-- A failed order told its buyer "certainly no charge" (a retry with its key pays
-- again): Payrail must hold no succeeded charge for it, refunded or not.
SELECT 'failed order ("certainly no charge") that Payrail charged', o.id::text
FROM orders o JOIN payrail.charges c ON c.idempotency_key = o.id::text
WHERE o.status = 'failed' AND c.status = 'succeeded'
UNION ALL
-- A refund is recorded on its order.
SELECT 'refunded charge not recorded on its order', c.id
FROM payrail.charges c JOIN orders o ON o.id::text = c.idempotency_key
WHERE c.refund_id IS NOT NULL AND o.refund_id IS DISTINCT FROM c.refund_id
UNION ALL
SELECT 'order pending for over 15 minutes', o.id::text
FROM orders o
WHERE o.status = 'pending' AND o.created_at < now() - interval '15 minutes';
