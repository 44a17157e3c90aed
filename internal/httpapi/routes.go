package httpapi

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

}
