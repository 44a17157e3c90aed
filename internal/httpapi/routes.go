package httpapi

import (
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/shed"
)

// routes is the whole API on one page: the rings every request passes, then
// each route on one row: its class, its method and path, its handler, and
// every step its request passes after the outer rings, in order: its
// authentication, the protections of internal/limits that rings decide
// (limited, lease), and those its handler decides once the body names their
// key (inHandler). A test (TestHandlersDecideOnlyWhatTheirRowsName) fails when
// a handler decides a limit its row does not name.
func (s *Server) routes() {
	e := s.echo
	e.Use(
		withRequestID,
		securityHeaders,
		s.observe,
		s.recoverPanics,
		s.refuseCrossSiteWrites,               // a browser's write from another site: 403, before anything is read
		s.readBody,                            // before any scarce resource: a slow body holds nothing
		s.boundInFlight(s.config.MaxInFlight), // limits.InFlight: every route but the exempt and those bounded apart
		s.shedLoad,                            // the worker utilization shedder, then fleet usage: by the route's class
	)

	// Each route's class says what its requests are worth when there is not
	// room for all: the shedders refuse sheddable first, then normal, never
	// critical (money, the door, logging in, the admin's switches); exempt
	// routes are never counted in flight or shed. See internal/shed.
	const critical, normal, sheddable, exempt = shed.Critical, shed.Normal, shed.Sheddable, shed.Exempt
	const get, post, put, patch, del = "GET", "POST", "PUT", "PATCH", "DELETE"
	r, as := s.route, s.as

	r(exempt, get, "/healthz", s.healthz, quiet, ownEncoding)
	r(exempt, get, "/readyz", s.readyz, quiet, ownEncoding)
	r(sheddable, get, "/problems/:slug", s.problemDoc)
	// Files are compressed once and kept (static.go): ownEncoding.
	r(sheddable, get, "/openapi.yaml", s.openAPI, quiet, ownEncoding) // the contract, docs/openapi.yaml
	// The browser front end (web/): one page, its assets (quiet: a page
	// view is one line of the log, not one per file).
	r(sheddable, get, "/", s.page, ownEncoding)
	r(sheddable, get, "/door", s.doorPage, ownEncoding) // the scanner app: works offline
	// A page's files are exempt: the shedders decide at the page ("/"), whose
	// refusal is a page in words; a page let in gets every file it names (a
	// module refused would leave it half-built), and each is served from memory.
	r(exempt, get, "/ui/*", s.asset, quiet, ownEncoding)
	r(sheddable, get, "/docs", toAPIReference)
	r(sheddable, get, "/docs/", s.apiReference, ownEncoding)         // the contract as a page to read
	r(sheddable, get, "/docs/*", s.apiReference, quiet, ownEncoding) // its files

	// A buyer's or an organizer's request counts in flight (lease: 429 past
	// the maximum) from after its rate limits to its answer. A logout is
	// never refused for it.
	buyerLease, organizerLease := s.lease(limits.BuyerConcurrency), s.lease(limits.OrganizerConcurrency)

	// Accounts and sessions. signup-address runs before anything else of the
	// signup routes, so before any password hash. A login's limits are decided
	// in the handler once the body names the email and maybe a known device
	// (login-device, else login-address and login-email), before any hash.
	logins := inHandler(limits.LoginDevice, limits.LoginAddress, limits.LoginEmail)
	r(normal, post, "/v1/buyers", s.createAccount(auth.Buyer), s.limited(limits.SignupAddress))
	r(normal, post, "/v1/organizers", s.createAccount(auth.Organizer), s.limited(limits.SignupAddress))
	r(critical, post, "/v1/login", s.login, logins)
	r(critical, post, "/v1/web/session", s.webLogin, logins) // the same login, for the browser: cookies, not tokens
	r(normal, get, "/v1/web/session", s.webSession)          // who the browser's cookie is: 200 logged out too
	r(critical, del, "/v1/web/session", s.webLogout)
	r(critical, post, "/v1/logout", s.logout, as())
	r(normal, get, "/v1/me", s.me, as(), s.lease(limits.BuyerConcurrency, limits.OrganizerConcurrency))

	// Events and seat maps: public reads (the list and seat maps from snapshots
	// at most 1 s old); organizers create events and see their own. A live
	// seat map is not counted in flight (it lasts): STAGEDOOR_MAX_STREAMS
	// bounds the streams apart, and they are shed as sheddable.
	r(normal, post, "/v1/events", s.createEvent, as(auth.Organizer), s.limited(limits.EventCreate), organizerLease)
	r(sheddable, get, "/v1/events", s.listEvents)
	r(sheddable, get, "/v1/events/:id", s.getEvent)
	r(sheddable, get, "/v1/events/:id/seats", s.seatMap, ownEncoding)           // compressed once a snapshot
	r(sheddable, get, "/v1/events/:id/image", s.eventImage, quiet, ownEncoding) // JPEG or PNG: compressed already
	r(sheddable, get, "/v1/events/:id/seats/stream", s.streamSeats, boundedApart(limits.Streams), ownEncoding)
	r(sheddable, get, "/v1/organizer/events", s.organizerEvents, as(auth.Organizer), organizerLease)
	// An organizer's own event, read now; its changes; its cancellation, whose
	// refunds run in the background (critical: it is money).
	r(normal, get, "/v1/organizer/events/:id", s.organizerEvent, as(auth.Organizer), organizerLease)
	r(normal, patch, "/v1/organizer/events/:id", s.changeEvent, as(auth.Organizer), organizerLease)
	r(critical, post, "/v1/organizer/events/:id/cancel", s.cancelEvent, as(auth.Organizer), organizerLease)
	// Its image: a body of up to 2 MB (bodyLimits), re-encoded by internal/event.
	r(normal, put, "/v1/organizer/events/:id/image", s.putEventImage, as(auth.Organizer), organizerLease)
	r(normal, del, "/v1/organizer/events/:id/image", s.deleteEventImage, as(auth.Organizer), organizerLease)
	// The box office: an event's orders a page at a time, and its attendee
	// list, streamed as CSV (sheddable: a large read that can wait).
	r(normal, get, "/v1/organizer/events/:id/orders", s.eventOrders, as(auth.Organizer), organizerLease)
	r(sheddable, get, "/v1/organizer/events/:id/attendees.csv", s.attendeesCSV, as(auth.Organizer), organizerLease)
	// The organizer's dashboard: an event's sales at a glance, polled while
	// its page is open (sheddable: a report, asked again a few seconds later).
	r(sheddable, get, "/v1/organizer/events/:id/sales", s.eventSales, as(auth.Organizer), organizerLease)

	// Waiting room (events created with one; others answer 404 no-waiting-room
	// before any token is spent). Polling is neither limited nor counted in
	// flight: the room paces it (estimated_wait_seconds, Retry-After), with
	// its queue token a poll costs the room no Redis call, and a lease would
	// be two more a poll. Redis unreachable: 503, fail closed.
	r(normal, post, "/v1/events/:id/queue", s.joinQueue, as(auth.Buyer), s.limited(limits.QueueJoin), buyerLease)
	r(normal, get, "/v1/events/:id/queue", s.queueStatus, as(auth.Buyer))
	// Its organizer (and the admin, below) pauses, resumes or changes the
	// rate of a live room; critical, so that an overloaded sale can be slowed.
	r(critical, get, "/v1/organizer/events/:id/waiting-room", s.getWaitingRoom, as(auth.Organizer), organizerLease)
	r(critical, patch, "/v1/organizer/events/:id/waiting-room", s.patchWaitingRoom, as(auth.Organizer), organizerLease)

	// Holds, once the body names the event (and so its organizer), before the
	// write: on a waiting-room event the buyer's admission (from memory after
	// the first time), then hold-buyer and hold-organizer as one decision, and
	// the hold's lease in flight in the same Redis script as hold-buyer.
	r(normal, post, "/v1/holds", s.createHold, as(auth.Buyer),
		inHandler(limits.RoomAdmission, limits.HoldBuyer, limits.HoldOrganizer, limits.BuyerConcurrency))
	r(normal, get, "/v1/holds/:id", s.getHold, as(auth.Buyer), buyerLease)
	r(normal, del, "/v1/holds/:id", s.releaseHold, as(auth.Buyer), buyerLease)

	// Checkout, once the body is read and checked and the Idempotency-Key
	// claimed: the payment breaker; at most STAGEDOOR_CHECKOUT_SLOTS at once
	// per instance, the next refused at once (503, Retry-After: 2), never a
	// queue; checkout-buyer and checkout-hold as one decision; then the slot
	// is taken (createOrder, admitPayment).
	r(critical, post, "/v1/orders", s.createOrder, as(auth.Buyer), buyerLease,
		inHandler(limits.PaymentBreaker, limits.CheckoutSlots, limits.CheckoutBuyer, limits.CheckoutHold))
	r(normal, get, "/v1/orders", s.listOrders, as(auth.Buyer), buyerLease)
	r(critical, get, "/v1/orders/:id", s.getOrder, as(auth.Buyer), buyerLease)
	// Refunds: the buyer within the event's refund window, its organizer at
	// any time; each ticket refunds once, so neither is rate-limited.
	r(critical, post, "/v1/orders/:id/refund", s.refundOrder, as(auth.Buyer), buyerLease)
	r(critical, post, "/v1/organizer/orders/:id/refund", s.organizerRefundOrder, as(auth.Organizer), organizerLease)
	r(normal, get, "/v1/tickets", s.listTickets, as(auth.Buyer), buyerLease)
	r(normal, get, "/v1/tickets/:id/qr", s.ticketQR, as(auth.Buyer), quiet, ownEncoding) // immutable images: not counted in flight
	// A transfer gives the ticket to another buyer, named by email; every
	// attempt spends a transfer-buyer token, so that trying emails is slow.
	r(normal, post, "/v1/tickets/:id/transfer", s.transferTicket, as(auth.Buyer), s.limited(limits.TransferBuyer), buyerLease)

	// Scanning. Organizers manage their scanner keys and read the audit; a
	// door device scans with X-Api-Key, limited by scanner-key on the key's id
	// (a venue's phones share one address), then one conditional write admits.
	r(normal, post, "/v1/scanner-keys", s.createScannerKey, as(auth.Organizer), organizerLease)
	r(normal, get, "/v1/scanner-keys", s.listScannerKeys, as(auth.Organizer), organizerLease)
	r(normal, del, "/v1/scanner-keys/:id", s.revokeScannerKey, as(auth.Organizer), organizerLease)
	scanner := step{ring: s.authenticateScanner()}
	r(critical, post, "/v1/scans", s.scan, scanner, s.limited(limits.ScannerKey))
	// Offline: a device fetches the events' public keys and the revocations to
	// check signed codes alone, and uploads the scans it made meanwhile (a
	// token a scan; a revoked key too, of what it scanned before).
	r(critical, get, "/v1/scanner/keyset", s.keyset, scanner, s.limited(limits.ScannerKey))
	r(critical, get, "/v1/scanner/revocations", s.revocations, scanner, s.limited(limits.ScannerKey))
	// …and the tickets that admit, with their references, to check a typed one:
	// normal, not critical, as it is long and read every minute (a door keeps
	// the list it has).
	r(normal, get, "/v1/scanner/tickets", s.listedTickets, scanner, s.limited(limits.ScannerKey))
	r(critical, post, "/v1/scans/batch", s.uploadScans, step{ring: s.authenticateUploader()}, s.limited(limits.ScannerKey))
	r(normal, del, "/v1/organizer/tickets/:id", s.revokeTicket, as(auth.Organizer), organizerLease)
	r(sheddable, get, "/v1/events/:id/scans", s.listScans, as(auth.Organizer), organizerLease)

	// Admin: the limits' run-time settings, behind STAGEDOOR_ADMIN_TOKEN
	// (no token configured: these answer 404).
	admin := step{ring: s.adminOnly()}
	r(critical, get, "/v1/admin/limits", s.listLimits, admin)
	r(critical, put, "/v1/admin/limits/:name", s.putLimit, admin)
	r(critical, get, "/v1/admin/events/:id/waiting-room", s.getWaitingRoom, admin)
	r(critical, patch, "/v1/admin/events/:id/waiting-room", s.patchWaitingRoom, admin)
}
