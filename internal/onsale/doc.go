// Package onsale is the on-sale simulator: it drives any Stagedoor, through
// its HTTP API and nothing else, through the minute it exists for, and says
// whether it stayed fair and truthful. cmd/onsale is its command line; the
// integration test of this package runs it against three instances on a
// Redis Cluster behind HAProxy.
//
// A run has three acts.
//
// Prepare: an organizer logs in through the API (signing up first, on the
// first run), and creates an event of Options.Seats seats whose sale opens
// Options.Lead from now, with a waiting room admitting Options.RoomRate
// buyers a second (none when 0). The buyers and bots are accounts made with
// auth.Service.PrepareBuyers straight in Stagedoor's database: one bcrypt hash
// for all of them, one session each, so that preparing 5,000 buyers takes a
// second and not the hour that 5,000 bcrypt logins would.
//
// Play: the buyers arrive as a spike around the sale's opening (a normal
// distribution centred on on_sale_at, Options.Spread wide, so some arrive
// before it and join the waiting room's lottery). Each joins the queue, polls
// it as the answers say (estimated_wait_seconds, Retry-After), reads the seat
// map once admitted, holds 1 to 4 seats (other seats again on a 409), and pays
// with an Idempotency-Key (some with a card that is declined first), then
// stops. Bots ignore the queue and every Retry-After: each hammers seat maps
// and holds for the whole sale. Every client dials from a 127/8 address of
// its own (bots share a few), so that an edge that limits per client address
// sees many clients, as in production. Faults (Options.Faults) are run at
// given times after the opening: a Go test kills a node of its own cluster, the
// command line runs a script.
//
// Report: every request is recorded (time, route, status, latency, the
// instance that served it from X-Served-By, the problem type, what refused it
// and the limit its RateLimit-Policy named). An answer is classified by its
// status and problem type against the contract's catalogue (docs/openapi.yaml):
// every 429 and every documented 503 is a refusal, counted by the limit or
// shedder it names; any other 5xx is an error. Run then checks the outcome
// against PostgreSQL and the record (see Check) and writes a JSON report, a
// self-contained HTML page with charts, and every request and buyer as CSV.
//
// It owns no table and no key: it reads Stagedoor's database for the checks
// and writes it only through auth.Service.PrepareBuyers.
package onsale
