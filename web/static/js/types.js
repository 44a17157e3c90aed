// The shapes of the API's JSON that the pages send and read, as JSDoc types for
// the type check (tsc --checkJs, tsconfig.json). Each names the schema of
// docs/openapi.yaml it follows (components.schemas, or the path whose answer it
// is); members the pages do not read may be left out. The file holds no code:
// modules import its types with import("./types.js").Name.

/**
 * An RFC 9457 problem (Problem). The server's carry type, title, status and
 * detail; the ones the page makes itself (no connection) only title and detail.
 * @typedef {object} Problem
 * @property {string} [type] "/problems/{slug}"
 * @property {string} [title]
 * @property {number} [status]
 * @property {string} [detail]
 * @property {string} [limit] rate-limited, too-many-concurrent-requests: the limit that refused
 * @property {number} [retry_after_ms] rate-limited: when a retry would be allowed, in ms
 * @property {string[]} [unavailable_seat_ids] seats-unavailable: the seats held or sold
 * @property {SoldOutSection[]} [sold_out_sections] sold-out: the sections of general admission short of places
 * @property {ScanResult} [result] scan-rejected: why
 * @property {string} [first_scanned_at] scan-rejected, already_scanned: the admission
 * @property {string} [ticket_id] scan-rejected: the organizer's own ticket
 * @property {string[]} [not_refundable_ticket_ids] ticket-not-refundable: the tickets named that cannot be
 * @property {"scanned" | "transferred" | "revoked"} [ticket_status] ticket-not-transferable: why
 */

/**
 * Who is logged in (Principal): GET /v1/me, GET /v1/web/session and the login's answer.
 * @typedef {object} Principal
 * @property {string} id
 * @property {"buyer" | "organizer"} kind
 * @property {string} email
 */

/**
 * The answer of POST /v1/web/session.
 * @typedef {object} WebSession
 * @property {Principal} principal
 * @property {string} expires_at
 */

/**
 * The answer of GET /v1/web/session (WebSessionState): 200 logged out too.
 * @typedef {object} WebSessionState
 * @property {boolean} authenticated
 * @property {Principal} [principal] when authenticated
 */

/**
 * A section of an event (Section): seated (rows, seats_per_row) or of general
 * admission (places, which no seat map lists).
 * @typedef {object} Section
 * @property {string} id
 * @property {string} name
 * @property {boolean} general_admission
 * @property {number} [rows] seated only
 * @property {number} [seats_per_row] seated only
 * @property {number} price_cents
 * @property {number} capacity its seats or places
 * @property {number} available its seats or places neither held nor sold
 */

/**
 * A section of POST /v1/events (SeatedSectionRequest, GeneralSectionRequest).
 * @typedef {{name: string, rows: number, seats_per_row: number, price_cents: number}
 *   | {name: string, general_admission: true, capacity: number, price_cents: number}} SectionRequest
 */

/**
 * POST /v1/events (EventRequest).
 * @typedef {object} EventRequest
 * @property {string} name
 * @property {string} venue
 * @property {string} [description]
 * @property {string} starts_at
 * @property {string} [on_sale_at]
 * @property {string} [refunds_until]
 * @property {string} [currency]
 * @property {SectionRequest[]} sections
 * @property {{admit_per_second: number} | null} [waiting_room]
 */

/**
 * PATCH /v1/organizer/events/{id} (EventChange): each member sent is changed;
 * refunds_until null removes the refund window.
 * @typedef {object} EventChange
 * @property {string} [name]
 * @property {string} [venue]
 * @property {string} [description]
 * @property {string} [starts_at]
 * @property {string | null} [refunds_until]
 */

/**
 * An event (Event).
 * @typedef {object} Event
 * @property {string} id
 * @property {string} name
 * @property {string} venue
 * @property {string} description "" for none
 * @property {"scheduled" | "cancelled"} status
 * @property {string} starts_at
 * @property {string} on_sale_at
 * @property {string | null} refunds_until buyers may refund until then; null: they cannot
 * @property {string} organizer_id
 * @property {string} currency
 * @property {{admit_per_second: number} | null} waiting_room
 * @property {Section[]} [sections] on one event; not in lists
 * @property {number} seats_total
 * @property {number} seats_available
 * @property {number | null} from_price_cents the lowest section price; null when none
 * @property {string | null} image_url its image (GET /v1/events/{id}/image), null when none
 * @property {number} [image_width] its image's size in pixels, when it has one
 * @property {number} [image_height]
 * @property {string} created_at
 */

/**
 * The progress of a cancelled event's refunds (Cancellation).
 * @typedef {object} Cancellation
 * @property {number} orders
 * @property {number} refunded
 * @property {number} pending
 * @property {boolean} done
 */

/**
 * An organizer's event with its sales (OrganizerEvent).
 * @typedef {Event & {seats_held: number, seats_sold: number, revenue_cents: number, cancellation: Cancellation | null}} OrganizerEvent
 */

/**
 * One section of an event's sales (SectionSales).
 * @typedef {object} SectionSales
 * @property {string} id
 * @property {string} name
 * @property {boolean} general_admission
 * @property {number} price_cents
 * @property {number} capacity
 * @property {number} sold
 * @property {number} held
 * @property {number} available
 * @property {number} revenue_cents its sold seats at their price
 */

/**
 * An event's sales, for its organizer (EventSales, GET /v1/organizer/events/{id}/sales).
 * @typedef {object} EventSales
 * @property {string} currency
 * @property {number} capacity
 * @property {number} tickets_sold
 * @property {number} tickets_held
 * @property {number} revenue_cents kept: gross_cents less refunded_cents
 * @property {number} gross_cents
 * @property {number} refunded_cents
 * @property {{pending: number, confirmed: number, partially_refunded: number, refunded: number}} orders
 * @property {{scanned: number, admitting: number}} check_ins
 * @property {SectionSales[]} sections
 */

/**
 * A page of GET /v1/events (EventPage).
 * @typedef {object} EventPage
 * @property {Event[]} events
 * @property {string | null} next_after
 */

/** @typedef {"available" | "held" | "sold"} SeatStatus */

/**
 * A seat (Seat).
 * @typedef {object} Seat
 * @property {string} id
 * @property {string} section
 * @property {string} row "A", "B", … "Z", "AA", …
 * @property {number} number
 * @property {number} price_cents
 * @property {SeatStatus} status
 */

/**
 * A seat's new status: the stream's "changes" list only these members.
 * @typedef {{id: string, status: SeatStatus}} SeatChange
 */

/**
 * GET /v1/events/{id}/seats and the stream's snapshot (SeatMap).
 * @typedef {object} SeatMap
 * @property {string} event_id
 * @property {string} as_of
 * @property {Seat[]} seats
 */

/**
 * The stream's "changes" message: a SeatMap of the changed seats only.
 * @typedef {object} SeatChanges
 * @property {string} event_id
 * @property {string} as_of
 * @property {SeatChange[]} seats
 */

/**
 * The buyer's place in a waiting room (QueueStatus).
 * @typedef {object} QueueStatus
 * @property {"waiting" | "admitted" | "closed" | "sold_out"} status
 * @property {string} event_id
 * @property {number} [position]
 * @property {number} [estimated_wait_seconds]
 * @property {boolean} [paused]
 * @property {string} [admitted_until]
 * @property {"seats_held" | "event_started"} [closed_reason]
 * @property {string} [queue_token]
 */

/**
 * Places of a section of general admission (PlacesRequest).
 * @typedef {{section_id: string, quantity: number}} PlacesRequest
 */

/**
 * POST /v1/holds (HoldRequest): seats, places or both.
 * @typedef {{event_id: string, seat_ids?: string[], general?: PlacesRequest[]}} HoldRequest
 */

/**
 * A hold's places of one section of general admission (Places).
 * @typedef {{section_id: string, section: string, quantity: number}} Places
 */

/**
 * A section short of places, in a sold-out problem (SoldOutSection).
 * @typedef {{section_id: string, section: string, asked: number, available: number}} SoldOutSection
 */

/**
 * A hold (Hold).
 * @typedef {object} Hold
 * @property {string} id
 * @property {string} event_id
 * @property {string[]} seat_ids its seats, then its places
 * @property {Places[]} general its places, by section
 * @property {"active" | "expired" | "released" | "converted"} status
 * @property {string} expires_at
 * @property {number} total_cents
 * @property {string} currency
 * @property {string} created_at
 */

/**
 * A ticket (Ticket).
 * @typedef {object} Ticket
 * @property {string} id
 * @property {string} event_id
 * @property {string} seat_id
 * @property {string} section
 * @property {boolean} general_admission a place of general admission: no row or seat number
 * @property {string} [code] left out once transferred
 * @property {string} reference its short reference (10 Crockford base32 characters), shown grouped 4-4-2
 * @property {"valid" | "scanned" | "refund_pending" | "refunded" | "transferred"} status
 */

/**
 * A refund of an order (Refund).
 * @typedef {object} Refund
 * @property {string} id
 * @property {"pending" | "succeeded" | "failed"} status
 * @property {"buyer" | "organizer" | "cancellation" | "payrail"} reason
 * @property {number} amount_cents
 * @property {string[]} ticket_ids
 * @property {string} created_at
 * @property {string} [settled_at]
 */

/**
 * An order (Order).
 * @typedef {object} Order
 * @property {string} id
 * @property {"pending" | "confirmed" | "partially_refunded" | "refunded" | "declined" | "failed" | "released"} status
 * @property {string} hold_id
 * @property {string} event_id
 * @property {number} total_cents
 * @property {string} currency
 * @property {string} created_at
 * @property {string} [refunded_at]
 * @property {number} refunded_cents
 * @property {Refund[]} refunds
 * @property {Ticket[]} tickets
 */

/**
 * A ticket of an order, as its event's organizer reads it (OrganizerTicket).
 * @typedef {object} OrganizerTicket
 * @property {string} id
 * @property {string} reference its short reference (shown grouped 4-4-2)
 * @property {{section: string, row: string, number: number}} seat row "" for a place of general admission
 * @property {"valid" | "scanned" | "refunded" | "transferred"} status
 * @property {string} holder_email
 */

/**
 * An order, as its event's organizer reads it (OrganizerOrder).
 * @typedef {object} OrganizerOrder
 * @property {string} id
 * @property {"pending" | "confirmed" | "refunded"} status
 * @property {string} buyer_email
 * @property {number} total_cents
 * @property {string} currency
 * @property {string} created_at
 * @property {OrganizerTicket[]} tickets
 */

/**
 * A page of an event's orders (GET /v1/organizer/events/{id}/orders).
 * @typedef {object} OrganizerOrderPage
 * @property {OrganizerOrder[]} orders
 * @property {string | null} next_after
 */

/**
 * A scanner key as listed (ScannerKey).
 * @typedef {object} ScannerKey
 * @property {string} id
 * @property {string} label
 * @property {string | null} event_id
 * @property {string} created_at
 * @property {string | null} revoked_at
 */

/**
 * A new scanner key, with the key this once (NewScannerKey).
 * @typedef {ScannerKey & {key: string}} NewScannerKey
 */

/** @typedef {"admitted" | "already_scanned" | "wrong_event" | "invalid" | "revoked" | "conflict"} ScanResult */

/**
 * A ticket admitted at the door (Admission): POST /v1/scans, 200.
 * @typedef {object} Admission
 * @property {"admitted"} result
 * @property {string} ticket_id
 * @property {string} event_id
 * @property {string} reference
 * @property {TicketSeat} seat
 * @property {string} scanned_at
 */

/**
 * Where a ticket admits (TicketSeat): row "" for a place of general admission.
 * @typedef {{section: string, row: string, number: number, general_admission: boolean}} TicketSeat
 */

/**
 * One scan of the audit (ScanAttempt).
 * @typedef {object} ScanAttempt
 * @property {string} id
 * @property {string} scanner_key_id
 * @property {string} scanner_label
 * @property {string | null} ticket_id
 * @property {string | null} reference the ticket's, null with ticket_id
 * @property {TicketSeat | null} seat the ticket's, null with ticket_id
 * @property {string} code_prefix
 * @property {ScanResult} result
 * @property {string} scanned_at
 * @property {boolean} offline
 * @property {boolean} uploaded_after_key_revoked
 * @property {string | null} device_scanned_at
 */

/**
 * A page of the scan audit (ScanPage).
 * @typedef {object} ScanPage
 * @property {string} event_id
 * @property {ScanAttempt[]} scans
 * @property {string | null} next_before
 */

/**
 * GET /v1/scanner/keyset.
 * @typedef {object} Keyset
 * @property {string | null} event_id the key's bound event
 * @property {{event_id: string, alg: "Ed25519", public_key: string}[]} keys
 */

/**
 * GET /v1/scanner/revocations.
 * @typedef {object} Revocations
 * @property {{ticket_id: string, event_id: string, revoked_at: string}[]} revocations
 * @property {string} next_after
 */

/**
 * GET /v1/scanner/tickets: the tickets that admit, with their references.
 * @typedef {object} ListedTickets
 * @property {{ticket_id: string, event_id: string, reference: string, seat: TicketSeat}[]} tickets
 * @property {string} next_after
 */

/**
 * One scan of POST /v1/scans/batch, as the door queues it.
 * @typedef {object} QueuedScan
 * @property {string} device_scan_id
 * @property {string} code
 * @property {string} scanned_at
 * @property {boolean} offline
 */

/**
 * The answer of POST /v1/scans/batch: one result a scan settled.
 * @typedef {object} UploadResults
 * @property {{device_scan_id: string, result: ScanResult | "key_revoked", ticket_id: string | null, first_scanned_at: string | null, replayed: boolean}[]} results
 */

export {};
