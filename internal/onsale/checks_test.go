package onsale

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// hold is a request of the tests below: a hold by client at second at
// (after the recorder's epoch), answered status with a problem and the limit
// its RateLimit-Policy named.
type hold struct {
	client       int32
	at           float64
	status       int
	slug, policy string
	limit        string // the limit a 429 names
	instance     string // "" is i1
	route        string // "" is routeHold
}

func record(epoch time.Time, hs ...hold) *recorder {
	rec := newRecorder(epoch)
	for _, h := range hs {
		route, instance := h.route, h.instance
		if route == "" {
			route = routeHold
		}
		if instance == "" {
			instance = "i1"
		}
		rec.add(h.client, route, epoch.Add(time.Duration(h.at*float64(time.Second))), 10*time.Millisecond,
			h.status, instance, h.slug, h.limit, "", h.policy)
	}
	return rec
}

// holds are n holds of one client, dt apart from start, each answered
// status with policy hold-buyer.
func holds(client int32, start, dt float64, n, status int, slug string) []hold {
	out := make([]hold, n)
	for i := range out {
		out[i] = hold{client: client, at: start + float64(i)*dt, status: status, slug: slug, policy: limitHoldBuyer}
	}
	return out
}

func limitCheck(hs ...hold) Check {
	requests, names, _ := record(time.Now(), hs...).snapshot()
	return holdLimitHeld(requests, names, LimitSetting{Rate: 10, PeriodMS: 60_000, Burst: 10, Mode: "enforce"}, 5)
}

// TestHoldLimitCheck: hold-buyer 10/1m burst 10 lets 20 holds through in any
// minute; more, whichever the instances, fails the check; holds the limit
// did not decide (no RateLimit-Policy) are left out; a 409 not-on-sale comes
// before the limits; and a limit nobody pushed against is not judged.
func TestHoldLimitCheck(t *testing.T) {
	t.Parallel()
	pushed := holds(0, 30, 0.1, 10, 429, "rate-limited") // refused by hold-buyer: asked for more
	for i := range pushed {
		pushed[i].limit, pushed[i].policy = limitHoldBuyer, limitHoldBuyer
	}
	twenty := append(holds(0, 0, 1, 10, 201, ""), holds(0, 10, 1, 10, 409, "seats-unavailable")...)

	c := limitCheck(append(twenty, pushed...)...)
	if !c.Passed || c.Skipped {
		t.Errorf("20 holds a minute, 10 more refused: %+v", c)
	}
	c = limitCheck(append(twenty, hold{client: 0, at: 50, status: 409, slug: "too-many-seats-held", policy: limitHoldBuyer, instance: "i3"})...)
	if c.Passed || !strings.Contains(c.Detail, "the most one account placed: 21 (buyer 1)") {
		t.Errorf("21 holds in a minute passed: %+v", c)
	}
	c = limitCheck(append(twenty, hold{client: 0, at: 50, status: 201}, hold{client: 0, at: 51, status: 409, slug: "not-on-sale"})...)
	if c.Passed && !c.Skipped {
		// 20 judged, the one without a policy not: nobody asked for more.
		t.Errorf("a hold that failed open was judged: %+v", c)
	}
	if !strings.Contains(c.Detail, "1 holds were let through without hold-buyer's decision") {
		t.Errorf("the hold that failed open is not counted apart: %s", c.Detail)
	}
	c = limitCheck(holds(1, 0, 1, 5, 201, "")...)
	if !c.Passed || !c.Skipped {
		t.Errorf("5 holds of one buyer put the limit to the test: %+v", c)
	}
	c = limitCheck(append(twenty, holds(0, 59.5, 0.01, 5, 201, "")...)...)
	if c.Passed || !strings.Contains(c.Detail, "accounts over: 1") {
		t.Errorf("25 holds in a minute: %+v", c)
	}
	// A server that sends no RateLimit headers: every hold past the limits counts.
	bare := holds(2, 0, 0.5, 21, 201, "")
	for i := range bare {
		bare[i].policy = ""
	}
	if c = limitCheck(bare...); c.Passed || !strings.Contains(c.Detail, "carry no RateLimit-Policy") {
		t.Errorf("21 holds without headers: %+v", c)
	}
	requests, names, _ := record(time.Now(), twenty...).snapshot()
	if c := holdLimitHeld(requests, names, LimitSetting{Rate: 10, PeriodMS: 60_000, Burst: 10, Mode: "shadow"}, 5); !c.Skipped {
		t.Errorf("a limit in shadow was judged: %+v", c)
	}
}

// TestOutageWindows: holds and joins past the limits without a
// RateLimit-Policy failed open; the room's 503s without a shedder failed
// closed; each is a window of moments after the opening, by instance too.
func TestOutageWindows(t *testing.T) {
	t.Parallel()
	epoch := time.Now()
	opening := epoch.Add(10 * time.Second) // the epoch is T-10s
	rec := record(epoch,
		hold{client: 0, at: 9, status: 409, slug: "not-on-sale"},          // before the limits: not fail-open
		hold{client: 0, at: 12, status: 201, policy: limitHoldBuyer},      // decided
		hold{client: 1, at: 12.5, status: 201},                            // failed open
		hold{client: 2, at: 14.2, status: 409, slug: "seats-unavailable"}, // failed open
		hold{client: 3, at: 13, status: 200, route: routeJoin},            // failed open
		hold{client: 3, at: 13.1, status: 200, route: routePoll},          // polls are not limited
		hold{client: 4, at: 11, status: 503, slug: "service-overloaded", route: routeJoin, instance: "i2"},
		hold{client: 4, at: 12, status: 503, slug: "service-overloaded", route: routePoll, instance: "i2"},
		hold{client: 5, at: 15.5, status: 503, slug: "service-overloaded", instance: "i3"},
		hold{client: 6, at: 15, status: 503, slug: "service-overloaded", route: routeOrder}, // the checkout bulkhead
		hold{client: -1, at: 11, status: 201},                                               // the setup's
	)
	requests, names, _ := rec.snapshot()
	o := outageOf(requests, names, limitsInForce{limitHoldBuyer: defaultHoldLimit}, true, epoch.Sub(opening), []FaultResult{{Name: "f", At: 3}})
	if !o.Headers {
		t.Fatal("the answers' RateLimit-Policy went unseen")
	}
	if w := o.FailOpen; w.Requests != 3 || w.FirstS != 2.5 || w.LastS != 4.2 || w.Seconds != 3 || w.SpanS() != 1.7 {
		t.Errorf("fail open = %+v", w)
	}
	if w := o.RoomUnavailable; w.Requests != 3 || w.FirstS != 1 || w.LastS != 5.5 || w.Seconds != 3 {
		t.Errorf("room unavailable = %+v", w)
	}
	if by := o.RoomUnavailableBy; len(by) != 2 || by["i2"].Requests != 2 || by["i3"].FirstS != 5.5 {
		t.Errorf("room unavailable by instance = %+v", by)
	}
	if o.FaultS == nil || *o.FaultS != 3 || o.FailOpenAfterFault.Requests != 2 || o.FailOpenAfterFault.FirstS != 3 ||
		o.RoomUnavailableAfterFault.Requests != 1 || o.RoomUnavailableAfterFault.FirstS != 5.5 {
		t.Errorf("after the fault at T+3s: %+v", o)
	}
	if text := o.Text(); !strings.Contains(text, "3 holds and joins let through") || !strings.Contains(text, "i2 2 from T+1.0s to T+2.0s") {
		t.Errorf("the outage's text: %s", text)
	}
	// queue-join in shadow sends no header: its joins are not failing open.
	o = outageOf(requests, names, limitsInForce{limitHoldBuyer: defaultHoldLimit, limitQueueJoin: {Mode: "shadow"}}, true, epoch.Sub(opening), nil)
	if o.FailOpen.Requests != 2 {
		t.Errorf("fail open with queue-join in shadow = %+v", o.FailOpen)
	}
}

// TestReportSumsUp: the report's counts by status class, refusal, instance
// and second, and when the last seat sold.
func TestReportSumsUp(t *testing.T) {
	t.Parallel()
	epoch := time.Now()
	opening := epoch.Add(2 * time.Second)
	rec := record(epoch,
		hold{client: 0, at: 2.1, status: 201, policy: limitHoldBuyer, instance: "i1"},
		hold{client: 0, at: 2.2, status: 201, route: routeOrder, instance: "i2"},
		hold{client: 1, at: 2.3, status: 429, slug: "rate-limited", instance: "-"},
		hold{client: 1, at: 2.4, status: 503, slug: "service-overloaded", route: routeOrder, instance: "i2"},
		hold{client: 2, at: 3.5, status: 500, slug: "internal-error", instance: "i1"},
		hold{client: 2, at: 3.6, status: 0, instance: "-"},
		hold{client: 9, at: 3.7, status: 201, instance: "i3"}, // a bot (2 buyers)
	)
	rec.sold = []soldAt{{at: 3900 * time.Millisecond, seats: 2}, {at: 2500 * time.Millisecond, seats: 2}}
	buyers := []*buyerState{{outcome: outcomeBought}, {outcome: outcomeSoldOut}}
	o := Options{Seats: 4, Buyers: 2, Bots: 1}
	r := buildReport(o, Sale{OnSaleAt: opening}, rec, played{buyers: buyers, ended: epoch.Add(4 * time.Second)},
		[]Check{{Name: "x", Passed: true}}, limitsInForce{}, time.Second, epoch)
	if r.Refused != 2 || r.Errors != 2-1 || r.NoAnswer != 1 || r.Requests != 7 {
		t.Errorf("refused %d, 5xx %d, no answer %d of %d", r.Refused, r.Errors, r.NoAnswer, r.Requests)
	}
	if r.Refusals["edge"] != 1 || r.Refusals["service-overloaded"] != 1 {
		t.Errorf("refusals = %v", r.Refusals)
	}
	if r.SoldOutS != 1.9 || r.SeatsSold != 0 { // SeatsSold is the live counter, not set here
		t.Errorf("sold out at %v (seats %d)", r.SoldOutS, r.SeatsSold)
	}
	if r.Series.T0 != -2 || r.Series.Sold[len(r.Series.Sold)-1] != 4 {
		t.Errorf("series from T%d, sold %v", r.Series.T0, r.Series.Sold)
	}
	if got := r.Series.Requests["503"][2] + r.Series.Requests["429"][2] + r.Series.Requests["2xx"][2]; got != 4 {
		t.Errorf("second T+0: %v", r.Series.Requests)
	}
	if r.Series.Requests["5xx"][3] != 1 || r.Series.Requests["no answer"][3] != 1 || r.Series.BuyerRequests["2xx"][3] != 0 {
		t.Errorf("second T+1: %v; the buyers' %v", r.Series.Requests, r.Series.BuyerRequests)
	}
	byName := map[string]InstanceStats{}
	for _, in := range r.PerInst {
		byName[in.Instance] = in
	}
	if i2 := byName["i2"]; i2.Requests != 2 || i2.Served != 1 || i2.Refused != 1 || i2.PeakRPS != 2 {
		t.Errorf("i2: %+v", i2)
	}
	if edge := byName["-"]; edge.Refused != 1 || edge.Errors != 1 {
		t.Errorf("the edge's own answers: %+v", edge)
	}
	if i1 := byName["i1"]; i1.Served != 1 || i1.Errors != 1 {
		t.Errorf("i1: %+v", i1)
	}
	got := map[string]int{}
	for _, l := range r.Latencies {
		got[l.Who+" "+l.Outcome] = l.Requests
	}
	if want := map[string]int{"buyers served": 2, "buyers refused": 2, "bots error": 1, "bots served": 1}; !maps.Equal(got, want) {
		t.Errorf("latencies by outcome count %v, want %v (no answer has no latency)", got, want)
	}
}

// TestLotteryWithFewEarlyJoinersStillFailsOnOrder: too few early joiners to
// judge the order by skips the check, unless a late joiner was admitted
// before an early one: that fails it.
func TestLotteryWithFewEarlyJoinersStillFailsOnOrder(t *testing.T) {
	t.Parallel()
	opening := time.Now()
	at := func(s float64) time.Time { return opening.Add(time.Duration(s * float64(time.Second))) }
	early := &buyerState{joinSent: at(-2), joinDone: at(-1.9), admittedAt: at(0.5)}
	late := &buyerState{joinSent: at(1), joinDone: at(1.1), admittedAt: at(1.2)}
	c := lottery([]*buyerState{early, late}, Sale{OnSaleAt: opening, HasRoom: true})
	if !c.Passed || !c.Skipped {
		t.Errorf("in order: %+v", c)
	}
	late.admittedAt = at(0.2)
	if c = lottery([]*buyerState{early, late}, Sale{OnSaleAt: opening, HasRoom: true}); c.Passed || c.Skipped {
		t.Errorf("a late joiner admitted first: %+v", c)
	}
}

// TestLotteryLateJoinerIsOneWhoNeverTriedEarly: a buyer whose join before the
// opening got no answer (or a 503) may have been queued as an early joiner,
// and joining again after the opening keeps that place: she is not a late
// joiner admitted early.
func TestLotteryLateJoinerIsOneWhoNeverTriedEarly(t *testing.T) {
	t.Parallel()
	opening := time.Now()
	at := func(s float64) time.Time { return opening.Add(time.Duration(s * float64(time.Second))) }
	early := &buyerState{joinSent: at(-2), joinDone: at(-1.9), joinTried: at(-2), admittedAt: at(0.5)}
	lost := &buyerState{joinTried: at(-1), joinSent: at(1), joinDone: at(1.1), admittedAt: at(0.2)}
	st := lotteryOf([]*buyerState{early, lost}, Sale{OnSaleAt: opening, HasRoom: true})
	if st.Early != 1 || st.Late != 0 || st.LateFirst != 0 {
		t.Errorf("%+v: the buyer whose early join got no answer counted as a late joiner", st)
	}
}
