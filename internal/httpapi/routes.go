package httpapi

import "github.com/stagedoor/stagedoor/internal/auth"

// routes is the whole API on one page: the rings every request passes, then each
// route with the rings of its own.
func (s *Server) routes() {
	e := s.echo
	e.Use(
		withRequestID,
		s.observe,
		s.recoverPanics,
		s.boundInFlight(s.cfg.MaxInFlight),
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
	e.POST("/v1/login", s.login, s.limitBy(s.byClientAddress("login-address")))
	e.POST("/v1/logout", s.logout, s.authenticate())
	e.GET("/v1/me", s.me, s.authenticate())
}
