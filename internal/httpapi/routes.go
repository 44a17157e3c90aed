package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/shed"
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
		s.shedLoad, // the worker utilization shedder, then fleet usage: by the route's class
	)

	// Each route's class says what its requests are worth when there is not
	// room for all: the shedders refuse sheddable first, then normal, never
	// critical (money, the door, logging in, the admin's switches); exempt
	// routes are never counted or shed. See internal/shed.
	critical, normal, sheddable, exempt := s.classify(shed.Critical), s.classify(shed.Normal),
		s.classify(shed.Sheddable), s.classify(shed.Exempt)

	exempt(e.GET("/healthz", s.healthz))
	exempt(e.GET("/readyz", s.readyz))
	sheddable(e.GET("/problems/:slug", s.problemDoc))
	sheddable(e.GET("/openapi.yaml", s.openAPI)) // the contract, docs/openapi.yaml
	// The browser front end (web/): one page, its assets.
	sheddable(e.GET("/", s.page))
	sheddable(e.GET("/door", s.doorPage)) // the scanner app: works offline
	sheddable(e.GET("/ui/*", s.asset))

	sheddable(e.GET("/docs", toAPIReference))
	sheddable(e.GET("/docs/*", s.apiReference)) // the contract as a page to read

	// A buyer's or an organizer's request counts in flight (buyer-concurrency,
	// organizer-concurrency: 429 past the maximum) from after its rate limits
	// to its answer. A logout is never refused for it.
	counted := s.countInFlight

	// Accounts and sessions. signup-address runs before anything else of the
	// signup routes, so before any password hash. A login's limits are decided
	// in the handler once the body names the email and maybe a known device
	// (login-device, else login-address and login-email), before any hash.
	signup := s.limitBy(s.byClientAddress(limits.SignupAddress))
	normal(e.POST("/v1/buyers", s.createAccount(auth.Buyer), signup))
	normal(e.POST("/v1/organizers", s.createAccount(auth.Organizer), signup))
	critical(e.POST("/v1/login", s.login))
	critical(e.POST("/v1/web/session", s.webLogin)) // the same login, for the browser: cookies, not tokens
	critical(e.DELETE("/v1/web/session", s.webLogout))
	critical(e.POST("/v1/logout", s.logout, s.authenticate()))
	normal(e.GET("/v1/me", s.me, s.authenticate(), counted))

	// Events and seat maps: public reads (the list and seat maps from snapshots
	// at most 1 s old); organizers create events (event-create, on the
	// organizer) and see their own.
	normal(e.POST("/v1/events", s.createEvent, s.authenticate(auth.Organizer), s.limitBy(s.byOrganizer(limits.EventCreate)), counted))
	sheddable(e.GET("/v1/events", s.listEvents))
	sheddable(e.GET("/v1/events/:id", s.getEvent))
	sheddable(e.GET("/v1/events/:id/seats", s.seatMap))
	sheddable(e.GET("/v1/events/:id/seats/stream", s.streamSeats)) // live: server-sent events; not in flight, bounded apart
	sheddable(e.GET("/v1/organizer/events", s.organizerEvents, s.authenticate(auth.Organizer), counted))

	// Waiting room (events created with one; others answer 404 no-waiting-room
	// before any token is spent). queue-join is keyed on the buyer and the
	// event; polling is neither limited nor counted in flight: the room paces
	// it (estimated_wait_seconds, Retry-After), with its queue token a poll
	// costs the room no Redis call, and a lease would be two more a poll.
	// Redis unreachable: 503, fail closed.
	normal(e.POST("/v1/events/:id/queue", s.joinQueue, s.authenticate(auth.Buyer), s.limitBy(s.byBuyerAndRoom(limits.QueueJoin)), counted))
	normal(e.GET("/v1/events/:id/queue", s.queueStatus, s.authenticate(auth.Buyer)))
	// Its organizer (and the admin, below) pauses, resumes or changes the
	// rate of a live room; critical, so that an overloaded sale can be slowed.
	critical(e.GET("/v1/organizer/events/:id/waiting-room", s.getWaitingRoom, s.authenticate(auth.Organizer), counted))
	critical(e.PATCH("/v1/organizer/events/:id/waiting-room", s.patchWaitingRoom, s.authenticate(auth.Organizer), counted))

	// Holds. hold-buyer and hold-organizer are one decision, made in createHold
	// once the body names the event (and so its organizer), before the write;
	// on a waiting-room event the buyer's admission is checked before them
	// (from memory after the first time). The hold's lease in flight
	// (buyer-concurrency) is taken in the same Redis script as hold-buyer.
	normal(e.POST("/v1/holds", s.createHold, s.authenticate(auth.Buyer)))
	normal(e.GET("/v1/holds/:id", s.getHold, s.authenticate(auth.Buyer), counted))
	normal(e.DELETE("/v1/holds/:id", s.releaseHold, s.authenticate(auth.Buyer), counted))

	// Checkout: at most STAGEDOOR_CHECKOUT_SLOTS at once per instance, the next
	// refused at once (503, Retry-After: 2), never a queue. The slot is taken in
	// createOrder once the buyer is authenticated and the body read and checked,
	// so a slow or bad request never holds one.
	critical(e.POST("/v1/orders", s.createOrder, s.authenticate(auth.Buyer), counted))
	normal(e.GET("/v1/orders", s.listOrders, s.authenticate(auth.Buyer), counted))
	critical(e.GET("/v1/orders/:id", s.getOrder, s.authenticate(auth.Buyer), counted))
	normal(e.GET("/v1/tickets", s.listTickets, s.authenticate(auth.Buyer), counted))
	normal(e.GET("/v1/tickets/:id/qr", s.ticketQR, s.authenticate(auth.Buyer))) // immutable images: not counted in flight

	// Scanning. Organizers manage their scanner keys and read the audit; a
	// door device scans with X-Api-Key, limited by scanner-key on the key's id
	// (a venue's phones share one address), then one conditional write admits.
	normal(e.POST("/v1/scanner-keys", s.createScannerKey, s.authenticate(auth.Organizer), counted))
	normal(e.GET("/v1/scanner-keys", s.listScannerKeys, s.authenticate(auth.Organizer), counted))
	normal(e.DELETE("/v1/scanner-keys/:id", s.revokeScannerKey, s.authenticate(auth.Organizer), counted))
	critical(e.POST("/v1/scans", s.scan, s.authenticateScanner(), s.limitBy(s.byScannerKey)))
	// Offline: a device fetches the events' public keys and the revocations to
	// check signed codes alone, and uploads the scans it made meanwhile (a
	// token a scan; a revoked key too, of what it scanned before).
	critical(e.GET("/v1/scanner/keyset", s.keyset, s.authenticateScanner(), s.limitBy(s.byScannerKey)))
	critical(e.GET("/v1/scanner/revocations", s.revocations, s.authenticateScanner(), s.limitBy(s.byScannerKey)))
	critical(e.POST("/v1/scans/batch", s.uploadScans, s.authenticateUploader(), s.limitBy(s.byScannerKey)))
	normal(e.DELETE("/v1/organizer/tickets/:id", s.revokeTicket, s.authenticate(auth.Organizer), counted))
	sheddable(e.GET("/v1/events/:id/scans", s.listScans, s.authenticate(auth.Organizer), counted))

	// Admin: the limits' run-time settings, behind STAGEDOOR_ADMIN_TOKEN
	// (no token configured: these answer 404).
	admin := s.adminOnly()
	critical(e.GET("/v1/admin/limits", s.listLimits, admin))
	critical(e.PUT("/v1/admin/limits/:name", s.putLimit, admin))
	critical(e.GET("/v1/admin/events/:id/waiting-room", s.getWaitingRoom, admin))
	critical(e.PATCH("/v1/admin/events/:id/waiting-room", s.patchWaitingRoom, admin))
}

// routeKey names a route: its method and echo's path template.
type routeKey struct{ method, path string }

// classify returns what marks a route of class: routes.go wraps each route in
// one, and the shedding ring reads the class back (classOf).
func (s *Server) classify(class shed.Class) func(*echo.Route) {
	return func(r *echo.Route) { s.classes[routeKey{r.Method, r.Path}] = class }
}

// classOf is the class of the request's route; a route routes.go did not
// classify (a test's own) is normal.
func (s *Server) classOf(c echo.Context) shed.Class {
	if class, ok := s.classes[routeKey{c.Request().Method, c.Path()}]; ok {
		return class
	}
	return shed.Normal
}

// RouteClass is the class routes.go gave the route of method and path (echo's
// template, such as /v1/holds/:id); false for a route it did not classify.
func (s *Server) RouteClass(method, path string) (shed.Class, bool) {
	class, ok := s.classes[routeKey{method, path}]
	return class, ok
}
