// Package httpapi is Stagedoor's HTTP face: the echo server, its rings, the
// routes of docs/openapi.yaml, and the one table that maps domain errors to problems.
// Only this package knows echo and HTTP status codes.
//
// It owns no table and no rule: a handler decodes the request, calls one
// feature package and encodes the answer. SQL and business rules do not belong
// here; internal/app builds the Server.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	swaggerui "github.com/swaggest/swgui/v5/static"
	"golang.org/x/sync/semaphore"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/boxoffice"
	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/concurrency"
	"github.com/stagedoor/stagedoor/internal/config"
	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/event"
	"github.com/stagedoor/stagedoor/internal/hold"
	"github.com/stagedoor/stagedoor/internal/limitadmin"
	"github.com/stagedoor/stagedoor/internal/outage"
	"github.com/stagedoor/stagedoor/internal/queuetoken"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
	"github.com/stagedoor/stagedoor/internal/scan"
	"github.com/stagedoor/stagedoor/internal/seatstream"
	"github.com/stagedoor/stagedoor/internal/shed"
	"github.com/stagedoor/stagedoor/internal/tally"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
	"github.com/stagedoor/stagedoor/internal/waitroom"
	"github.com/stagedoor/stagedoor/web"
)

// Deps are what the server is built from; internal/app makes each of them once.
type Deps struct {
	Config   config.Config
	Logger   *slog.Logger
	Registry *prometheus.Registry
	Limiter  *ratelimit.Limiter
	Auth     *auth.Service
	Settings *limitadmin.Service // the limits' run-time settings; nil turns the admin API off
	Events   *event.Service
	Holds    *hold.Service
	Checkout *checkout.Service
	Scans    *scan.Service
	WaitRoom *waitroom.Service // the on-sale waiting rooms, in Redis
	// BoxOffice answers an event's organizer about its orders and attendees.
	BoxOffice *boxoffice.Service
	// QueueTokens signs the waiting room's queue tokens, with which a poll
	// costs the room no Redis call of its own.
	QueueTokens *queuetoken.Signer
	Seats       *seatstream.Hub  // the live seat maps' streams
	TicketKeys  *ticketsign.Keys // the events' keys that sign ticket codes
	// BuyerConcurrency and OrganizerConcurrency bound a buyer's and an
	// organizer's requests in flight at once, across instances.
	BuyerConcurrency     *concurrency.Limiter
	OrganizerConcurrency *concurrency.Limiter
	// Shedders are asked about every request but the exempt routes', in
	// order (the worker utilization shedder, then fleet usage); none: no
	// shedding but the in-flight bound.
	Shedders []shed.Shedder
	// Probes are GET /readyz's checks of PostgreSQL and Redis.
	Probes Probes
	// Routes, when set, adds routes behind the same rings as the API's (tests
	// add slow, failing and panicking ones).
	Routes func(*echo.Echo)
}

// Probes check the stores for GET /readyz, each under the deadline of ctx.
type Probes struct {
	Postgres func(ctx context.Context) error
	// Redis pings a single Redis; Cluster, set instead on a Redis Cluster,
	// tells each node's state and the masters without a replica.
	Redis   func(ctx context.Context) error
	Cluster func(ctx context.Context) conn.ClusterHealth
}

// Server answers Stagedoor's HTTP API. It is an http.Handler.
type Server struct {
	config               config.Config
	logger               *slog.Logger
	registry             *prometheus.Registry
	limiter              *ratelimit.Limiter
	auth                 *auth.Service
	settings             *limitadmin.Service
	events               *event.Service
	holds                *hold.Service
	checkout             *checkout.Service
	scans                *scan.Service
	boxOffice            *boxoffice.Service
	waitRoom             *waitroom.Service
	queueTokens          *queuetoken.Signer
	seats                *seatstream.Hub
	ticketKeys           *ticketsign.Keys
	buyerConcurrency     *concurrency.Limiter
	organizerConcurrency *concurrency.Limiter
	shedders             []shed.Shedder
	probes               Probes

	metrics  *httpMetrics
	echo     *echo.Echo
	dbOutage *outage.Reporter // requests refused because PostgreSQL dropped them
	refusals *tally.Tally     // 429s and the 503s of bounds and shedders, logged a few lines with counts

	seatMapBodies seatMapBodies
	checkoutSlots *bulkhead                     // the checkout bulkhead
	streamSlots   *semaphore.Weighted           // the bound on live seat-map streams
	classes       map[routeKey]shed.Class       // each route's class (routes.go); read-only once New returns
	rows          map[routeKey][]ratelimit.Name // each route's protections past the outer rings, in its row's order
	unbounded     map[string]bool               // the routes (templates) the in-flight bound does not count
	quiet         map[string]bool               // the routes (templates) whose answers are logged at debug level (quiet)
	inFlight      inFlight                      // requests in flight on this instance
	ready         readiness                     // the last readiness check, for GET /readyz
	uiVersion     string                        // the version of the files under /ui/ (uiversion.go)
	static        *staticFiles                  // the front end's files (web/static), as answered
	vendor        *staticFiles                  // the third-party browser code (web/vendor)
	reference     *staticFiles                  // Swagger UI's files, for /docs/
	contract      *staticFile                   // docs/openapi.yaml, for /openapi.yaml
	qrCodes       qrCache                       // tickets' QR images, drawn once
}

// New builds the server and its routes.
func New(d Deps) *Server {
	s := &Server{
		config: d.Config, logger: d.Logger, registry: d.Registry, limiter: d.Limiter, auth: d.Auth,
		settings: d.Settings, events: d.Events, holds: d.Holds, checkout: d.Checkout, scans: d.Scans, boxOffice: d.BoxOffice,
		waitRoom: d.WaitRoom, queueTokens: d.QueueTokens, seats: d.Seats, ticketKeys: d.TicketKeys,
		buyerConcurrency: d.BuyerConcurrency, organizerConcurrency: d.OrganizerConcurrency,
		shedders: d.Shedders, probes: d.Probes,

		metrics:       newHTTPMetrics(d.Registry),
		echo:          echo.New(),
		dbOutage:      outage.New(d.Logger, "postgresql", 0),
		refusals:      tally.New(d.Logger, "refused", tally.Options{}),
		checkoutSlots: newBulkhead(d.Config.CheckoutSlots),
		streamSlots:   semaphore.NewWeighted(int64(d.Config.MaxStreams)),
		classes:       map[routeKey]shed.Class{},
		rows:          map[routeKey][]ratelimit.Name{},
		unbounded:     map[string]bool{},
		quiet:         map[string]bool{},
		static:        newStaticFiles(web.Static),
		vendor:        newStaticFiles(web.Vendor),
		reference:     newStaticFiles(swaggerui.FS),
		contract:      servedContract(),
	}
	s.uiVersion = uiVersion()
	s.static.edit = versionedPages(s.uiVersion)
	if d.Registry != nil && d.WaitRoom != nil && d.Events != nil {
		_ = d.Registry.Register(newSaleCollector(d.WaitRoom, d.Events)) // once a registry: a second server on it shares it
	}
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.routes()
	if d.Routes != nil {
		d.Routes(s.echo)
	}
	return s
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}
