package httpapi

import (
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/limits"
)

// routes is the whole API on one page: the rings every request passes, then each
// route with the rings of its own.
func (s *Server) routes() {
	e := s.echo
	e.Use(
		withRequestID,
		s.observe,
		s.recoverPanics,
		s.boundInFlight(s.Config.MaxInFlight),
		limitBody,
	)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metricsPage())
	e.GET("/problems/:slug", s.problemDoc)

	// Accounts and sessions. login-address runs before anything else of the
	// login route; login-email runs in the handler, before any password hash.
	e.POST("/v1/buyers", s.createAccount(auth.Buyer))
	e.POST("/v1/organizers", s.createAccount(auth.Organizer))
	e.POST("/v1/login", s.login, s.limitBy(s.byClientAddress(limits.LoginAddress)))
	e.POST("/v1/logout", s.logout, s.authenticate())
	e.GET("/v1/me", s.me, s.authenticate())

	// Events and seat maps: public reads (the list and seat maps from snapshots
	// at most 1 s old); organizers create events and see their own.
	e.POST("/v1/events", s.createEvent, s.authenticate(auth.Organizer))
	e.GET("/v1/events", s.listEvents)
	e.GET("/v1/events/:id", s.getEvent)
	e.GET("/v1/events/:id/seats", s.seatMap)
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
	// refused at once (503, Retry-After: 2), before anything else of the route
	// and without touching the database; never a queue.
	e.POST("/v1/orders", s.createOrder,
		s.bulkhead(s.checkoutSlots, "checkout", 2*time.Second), s.authenticate(auth.Buyer))
	e.GET("/v1/orders", s.listOrders, s.authenticate(auth.Buyer))
	e.GET("/v1/orders/:id", s.getOrder, s.authenticate(auth.Buyer))
	e.GET("/v1/tickets", s.listTickets, s.authenticate(auth.Buyer))

	// Scanning. Organizers manage their scanner keys and read the audit; a
	// door device scans with X-Api-Key, limited by scanner-key on the key's id
	// (a venue's phones share one address), then one conditional write admits.
	e.POST("/v1/scanner-keys", s.createScannerKey, s.authenticate(auth.Organizer))
	e.GET("/v1/scanner-keys", s.listScannerKeys, s.authenticate(auth.Organizer))
	e.DELETE("/v1/scanner-keys/:id", s.revokeScannerKey, s.authenticate(auth.Organizer))
	e.POST("/v1/scans", s.scan, s.authenticateScanner(), s.limitBy(s.byScannerKey))
	e.GET("/v1/events/:id/scans", s.listScans, s.authenticate(auth.Organizer))

	// Admin: the limits' run-time settings, behind STAGEDOOR_ADMIN_TOKEN
	// (no token configured: these answer 404).
	admin := s.adminOnly()
	e.GET("/v1/admin/limits", s.listLimits, admin)
	e.PUT("/v1/admin/limits/:name", s.putLimit, admin)
}
