package onsale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/google/uuid"

	"github.com/stagedoor/stagedoor/internal/apiclient"
)

// Options say what to drive and how. A zero Seats, Lead, Spread, name,
// cost or bound takes its value in Defaults; Buyers, Bots, RoomRate,
// DeclineRate and BotPause are as given (0 is none).
type Options struct {
	// URL is where Stagedoor answers: an edge (HAProxy) or one instance.
	URL string
	// DB is Stagedoor's database: the accounts are prepared in it and the
	// checks read it. Required.
	DB *pgxpool.Pool
	// PayrailDB holds Payrail's ledger (schema payrail); nil: DB, when the
	// schema is there. When it is nil and DB has no such schema, the charges
	// are checked only as far as Stagedoor's orders tell.
	PayrailDB *pgxpool.Pool
	// BcryptCost is the cost of the one hash of the accounts' password: the
	// cost the instances use (12 by default).
	BcryptCost int

	Buyers int // buyers who arrive for the sale
	Bots   int // scripts that ignore the queue, one account each
	Seats  int // the event's seats
	// RoomRate is the waiting room's admissions a second; 0: no waiting room.
	RoomRate int
	// Lead is how long after the event is made its sale opens.
	Lead time.Duration
	// Spread is the standard deviation of the buyers' arrivals around the
	// opening.
	Spread time.Duration
	// DeclineRate is the share of buyers whose first card is declined
	// (tok_declined); they then pay with tok_visa.
	DeclineRate float64
	PriceCents  int64
	// MaxHoldTries is how many holds a buyer tries before giving up.
	MaxHoldTries int
	// Pollers are buyers who only wait in the room, polling at the page's
	// cadence (poller.go): the cheap part of a crowd. 0: none.
	Pollers int
	// PollerConns are the connections the pollers share, each from an
	// address of its own with SourceAddrs (the edge allows 50 requests a
	// second an address, and a poller's first polls come a second apart);
	// 0: one for every 40 pollers, at least 16.
	PollerConns int
	// RedisURL, when set (REDIS_URL's form: a URL, or the cluster's nodes
	// host:port,…), is read for INFO commandstats and INFO cpu of every
	// master before and after each phase: the Redis cost of joins, of polls
	// and of the sale.
	RedisURL string
	// Greedy buyers, the first of the buyers, each place and give back holds
	// of one seat, one after the other, three more than hold-buyer allows in a
	// window, before they shop as the others do: the per-buyer limit is put to
	// the test even behind a waiting room, where bots never reach it. 0: none.
	Greedy int
	// BotPause is how long a bot waits between two requests (0: none, as fast
	// as answers come; on one machine with the stack, that starves the stack
	// of CPU before it starves the edge).
	BotPause time.Duration
	// BotAddrs is how many client addresses the bots share.
	BotAddrs int
	// SourceAddrs gives each client a 127/8 address of its own to dial from
	// (Linux routes all of 127/8 to the loopback); false dials as the system
	// chooses (macOS without aliases, or a remote Stagedoor).
	SourceAddrs bool
	// MaxDuration cuts the sale this long after its opening, whatever is left.
	MaxDuration time.Duration
	// AdmissionLength is how long an admission lasts on the instances
	// (waitroom.DefaultAdmission): an admission's moment is its
	// admitted_until less this.
	AdmissionLength time.Duration
	// AdminToken, when set, is used to read the hold-buyer limit in force
	// (GET /v1/admin/limits); without it, the default 10/1m is assumed.
	AdminToken string

	// OrganizerEmail and Password are the organizer's account, signed up on
	// the first run and logged in to on the next ones; Password is every
	// account's password. EmailPrefix starts the buyers' and bots' emails
	// (<prefix>buyer-00001@example.com); a run reuses the accounts of an
	// earlier one with the same prefix.
	OrganizerEmail string
	Password       string
	EmailPrefix    string

	// Faults run at their time after the opening.
	Faults []Fault
	// Progress receives a line a second while the sale runs; nil: none.
	Progress io.Writer
	// Out is the directory the report is written to; empty: no files.
	Out string
	// Seed seeds the arrivals and the choices; 0: the clock.
	Seed int64
}

// Fault is something done to the system under test at a moment of the sale.
type Fault struct {
	Name string
	// At is how long after on_sale_at it runs.
	At time.Duration
	// Do does it. Its error is reported; the sale goes on.
	Do func(ctx context.Context, s Sale) error
}

// Sale is what a run made: its event and when its sale opens.
type Sale struct {
	URL         string
	EventID     string
	OrganizerID string
	OnSaleAt    time.Time
	HasRoom     bool
}

// event is the sale's event id as the generated client takes it (the zero
// id when EventID is none: the server answers 404).
func (s Sale) event() apiclient.ID {
	id, _ := uuid.Parse(s.EventID)
	return id
}

// Defaults are the options a zero field gets, and cmd/onsale's defaults.
var Defaults = Options{
	BcryptCost:      12,
	Buyers:          5000,
	Bots:            200,
	Seats:           1000,
	RoomRate:        50,
	Lead:            10 * time.Second,
	Spread:          5 * time.Second,
	DeclineRate:     0.1,
	PriceCents:      4500,
	MaxHoldTries:    5,
	Greedy:          20,
	BotPause:        50 * time.Millisecond,
	BotAddrs:        4,
	MaxDuration:     5 * time.Minute,
	AdmissionLength: 15 * time.Minute,
	OrganizerEmail:  "onsale-organizer@example.com",
	Password:        "onsale-simulator-password",
	EmailPrefix:     "onsale-",
}

// withDefaults fills o's zero fields, and checks the rest.
func (o Options) withDefaults() (Options, error) {
	d := Defaults
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setDur := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	setStr := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	setInt(&o.BcryptCost, d.BcryptCost)
	setInt(&o.Seats, d.Seats)
	setInt(&o.MaxHoldTries, d.MaxHoldTries)
	if o.PollerConns == 0 {
		o.PollerConns = max(16, o.Pollers/40)
	}
	setInt(&o.BotAddrs, d.BotAddrs)
	setDur(&o.Lead, d.Lead)
	setDur(&o.Spread, d.Spread)
	setDur(&o.MaxDuration, d.MaxDuration)
	setDur(&o.AdmissionLength, d.AdmissionLength)
	setStr(&o.OrganizerEmail, d.OrganizerEmail)
	setStr(&o.Password, d.Password)
	setStr(&o.EmailPrefix, d.EmailPrefix)
	if o.PriceCents == 0 {
		o.PriceCents = d.PriceCents
	}
	if o.Seed == 0 {
		o.Seed = time.Now().UnixNano()
	}
	var errs []error
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("onsale: the URL %q is not http(s)://host:port", o.URL))
	}
	if o.DB == nil {
		errs = append(errs, errors.New("onsale: no database: the accounts are prepared in it and the checks read it"))
	}
	if o.Buyers < 1 || o.Bots < 0 || o.Seats < 1 || o.RoomRate < 0 {
		errs = append(errs, fmt.Errorf("onsale: %d buyers, %d bots, %d seats, room rate %d: want at least one buyer and one seat, none negative",
			o.Buyers, o.Bots, o.Seats, o.RoomRate))
	}
	if o.Seats > 200_000 {
		errs = append(errs, fmt.Errorf("onsale: %d seats is more than the simulator makes (200000)", o.Seats))
	}
	if o.DeclineRate < 0 || o.DeclineRate > 1 {
		errs = append(errs, fmt.Errorf("onsale: decline rate %v is not between 0 and 1", o.DeclineRate))
	}
	if o.Lead < time.Second {
		errs = append(errs, fmt.Errorf("onsale: a lead of %s leaves no time to arrive before the sale (want at least 1s)", o.Lead))
	}
	return o, errors.Join(errs...)
}
