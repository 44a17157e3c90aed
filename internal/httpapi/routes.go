package httpapi

import (
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/limits"
)

// routes is the whole API on one page: the rings every request passes, then each
// route with the rings of its own.
func (s *Server) routes() {
	e := s.echo
	e.Use(
		withRequestID,
		securityHeaders,
		s.observe,
		s.recoverPanics,
		s.refuseCrossSiteWrites, // a browser's write from another site: 403, before anything is read
		s.readBody,              // before any scarce resource: a slow body holds nothing
		s.boundInFlight(s.Config.MaxInFlight),
	)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metricsPage())
	e.GET("/problems/:slug", s.problemDoc)
	e.GET("/openapi.yaml", s.openAPI) // the contract, docs/openapi.yaml
	// The browser front end (web/): one page, its assets.
	e.GET("/", page)
	e.GET("/door", doorPage) // the scanner app: works offline
	e.GET("/ui/*", asset)

	e.GET("/docs", toAPIReference)
	e.GET("/docs/*", apiReference()) // the contract as a page to read

	// Accounts and sessions. signup-address runs before anything else of the
	// signup routes, so before any password hash. A login's limits are decided
	// in the handler once the body names the email and maybe a known device
	// (login-device, else login-address and login-email), before any hash.
	signup := s.limitBy(s.byClientAddress(limits.SignupAddress))
	e.POST("/v1/buyers", s.createAccount(auth.Buyer), signup)
	e.POST("/v1/organizers", s.createAccount(auth.Organizer), signup)
	e.POST("/v1/login", s.login)
	e.POST("/v1/web/session", s.webLogin) // the same login, for the browser: cookies, not tokens
	e.DELETE("/v1/web/session", s.webLogout)
	e.POST("/v1/logout", s.logout, s.authenticate())
	e.GET("/v1/me", s.me, s.authenticate())

	// Events and seat maps: public reads (the list and seat maps from snapshots
	// at most 1 s old); organizers create events (event-create, on the
	// organizer) and see their own.
	e.POST("/v1/events", s.createEvent, s.authenticate(auth.Organizer), s.limitBy(s.byOrganizer(limits.EventCreate)))
	e.GET("/v1/events", s.listEvents)
	e.GET("/v1/events/:id", s.getEvent)
	e.GET("/v1/events/:id/seats", s.seatMap)
	e.GET("/v1/events/:id/seats/stream", s.streamSeats) // live: server-sent events; not in flight, bounded apart
	e.GET("/v1/organizer/events", s.organizerEvents, s.authenticate(auth.Organizer))

	// Waiting room (events created with one; others answer 404 no-waiting-room
	// before any token is spent). queue-join is keyed on the buyer and the
	// event; polling is not limited. Redis unreachable: 503, fail closed.
	e.POST("/v1/events/:id/queue", s.joinQueue, s.authenticate(auth.Buyer), s.limitBy(s.byBuyerAndRoom(limits.QueueJoin)))
	e.GET("/v1/events/:id/queue", s.queueStatus, s.authenticate(auth.Buyer))

	// Holds. hold-buyer and hold-organizer are one decision, made in createHold
	// once the body names the event (and so its organizer), before the write;
	// on a waiting-room event the buyer's admission is checked before them.
	e.POST("/v1/holds", s.createHold, s.authenticate(auth.Buyer))
	e.GET("/v1/holds/:id", s.getHold, s.authenticate(auth.Buyer))
	e.DELETE("/v1/holds/:id", s.releaseHold, s.authenticate(auth.Buyer))

	// Checkout: at most STAGEDOOR_CHECKOUT_SLOTS at once per instance, the next
	// refused at once (503, Retry-After: 2), never a queue. The slot is taken in
	// createOrder once the buyer is authenticated and the body read and checked,
	// so a slow or bad request never holds one.
	e.POST("/v1/orders", s.createOrder, s.authenticate(auth.Buyer))
	e.GET("/v1/orders", s.listOrders, s.authenticate(auth.Buyer))
	e.GET("/v1/orders/:id", s.getOrder, s.authenticate(auth.Buyer))
	e.GET("/v1/tickets", s.listTickets, s.authenticate(auth.Buyer))
	e.GET("/v1/tickets/:id/qr", s.ticketQR, s.authenticate(auth.Buyer))

	// Scanning. Organizers manage their scanner keys and read the audit; a
	// door device scans with X-Api-Key, limited by scanner-key on the key's id
	// (a venue's phones share one address), then one conditional write admits.
	e.POST("/v1/scanner-keys", s.createScannerKey, s.authenticate(auth.Organizer))
	e.GET("/v1/scanner-keys", s.listScannerKeys, s.authenticate(auth.Organizer))
	e.DELETE("/v1/scanner-keys/:id", s.revokeScannerKey, s.authenticate(auth.Organizer))
	e.POST("/v1/scans", s.scan, s.authenticateScanner(), s.limitBy(s.byScannerKey))
	// Offline: a device fetches the events' public keys and the revocations to
	// check signed codes alone, and uploads the scans it made meanwhile.
	e.GET("/v1/scanner/keyset", s.keyset, s.authenticateScanner())
	e.GET("/v1/scanner/revocations", s.revocations, s.authenticateScanner())
	e.POST("/v1/scans/batch", s.uploadScans, s.authenticateScanner(), s.limitBy(s.byScannerKey))
	e.DELETE("/v1/organizer/tickets/:id", s.revokeTicket, s.authenticate(auth.Organizer))
	e.GET("/v1/events/:id/scans", s.listScans, s.authenticate(auth.Organizer))

	// Admin: the limits' run-time settings, behind STAGEDOOR_ADMIN_TOKEN
	// (no token configured: these answer 404).
	admin := s.adminOnly()
	e.GET("/v1/admin/limits", s.listLimits, admin)
	e.PUT("/v1/admin/limits/:name", s.putLimit, admin)
}
