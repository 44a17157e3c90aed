package onsale

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is everything a run measured and found: the JSON report as it is
// written, and what the HTML page draws.
type Report struct {
	Passed bool    `json:"passed"`
	Checks []Check `json:"checks"`

	URL         string       `json:"url"`
	EventID     string       `json:"event_id"`
	OnSaleAt    time.Time    `json:"on_sale_at"`
	Seats       int          `json:"seats"`
	Buyers      int          `json:"buyers"`
	Bots        int          `json:"bots"`
	RoomRate    int          `json:"room_rate"` // admissions a second; 0: no waiting room
	LeadS       float64      `json:"lead_s"`
	SpreadS     float64      `json:"spread_s"`
	DeclineRate float64      `json:"decline_rate"`
	Seed        int64        `json:"seed"`
	HoldLimit   LimitSetting `json:"hold_buyer_limit"`

	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`   // the last buyer done
	PreparedS float64   `json:"prepared_s"` // the accounts' preparation
	SaleS     float64   `json:"sale_s"`     // from on_sale_at to the last buyer done
	SeatsSold int64     `json:"seats_sold"` // as the buyers were told
	// SoldOutS is when the last seat was sold, as its buyer was told (seconds
	// after on_sale_at); -1 when some were left.
	SoldOutS float64        `json:"sold_out_s"`
	Outcomes map[string]int `json:"buyer_outcomes"`
	Requests int            `json:"requests"`
	ByStatus map[string]int `json:"requests_by_status"` // "201", "429", "no answer"
	// Refused are the documented refusals (every 429, the documented 503s),
	// Errors the undocumented 5xx, NoAnswer the requests that got none.
	Refused  int `json:"refused"`
	Errors   int `json:"errors_5xx"`
	NoAnswer int `json:"no_answer"`
	// Refusals counts the refusals by what refused them: a limit, a shedder,
	// "edge", or the type of a documented 503 that names neither.
	Refusals  map[string]int  `json:"refusals_by_limit"`
	Instances map[string]int  `json:"requests_by_instance"`
	PerInst   []InstanceStats `json:"instances"`
	Routes    []RouteStats    `json:"routes"`
	// Latencies are the answers' latencies by who asked (buyers, bots) and
	// how it ended (served, refused, error): a refusal should be fast, and a
	// bot's answers should cost no buyer's.
	Latencies []OutcomeLatency `json:"latencies_by_outcome"`
	// Pollers are the crowd's waiting pollers and their Redis cost, with
	// Options.Pollers.
	Pollers *PollerStats  `json:"pollers,omitempty"`
	Lottery LotteryStats  `json:"lottery"`
	Faults  []FaultResult `json:"faults"`
	Outage  OutageStats   `json:"outage"`
	Series  Series        `json:"series"`
}

// InstanceStats are the requests one instance answered (by X-Served-By; "-"
// is the edge's own answers and the requests that got none), served or
// refused, in all and a second: at the busiest second, and on average over
// the play (from the first client's first request to the last buyer done).
type InstanceStats struct {
	Instance   string  `json:"instance"`
	Requests   int     `json:"requests"`
	Served     int     `json:"served"`   // answered, and not a refusal
	Refused    int     `json:"refused"`  // a 429 or a documented 503
	Errors     int     `json:"errors"`   // an undocumented 5xx, or no answer
	PeakRPS    int     `json:"peak_rps"` // all its requests, at its busiest second
	PeakServed int     `json:"peak_served_rps"`
	PeakRefuse int     `json:"peak_refused_rps"`
	MeanServed float64 `json:"mean_served_rps"`
	MeanRefuse float64 `json:"mean_refused_rps"`
}

// RouteStats are one route's requests and latencies.
type RouteStats struct {
	Route    string         `json:"route"`
	Requests int            `json:"requests"`
	P50MS    float64        `json:"p50_ms"`
	P99MS    float64        `json:"p99_ms"`
	MaxMS    float64        `json:"max_ms"`
	ByStatus map[string]int `json:"by_status"`
}

// OutcomeLatency are the latencies of the answers one kind of client got
// with one outcome; requests that got no answer have none.
type OutcomeLatency struct {
	Who      string  `json:"who"`     // buyers or bots
	Outcome  string  `json:"outcome"` // served, refused or error
	Requests int     `json:"requests"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
}

// outcomeLatencies sums the answers up by who asked and how each ended, in
// the order buyers then bots, served, refused, error.
func outcomeLatencies(requests []request, buyers int) []OutcomeLatency {
	outcomes := map[uint8]string{kindOK: "served", kindRefused: "refused", kindError: "error"}
	type key struct{ who, outcome string }
	byKey := map[key][]time.Duration{}
	for _, q := range requests {
		outcome, answered := outcomes[q.kind]
		if !answered || q.client < 0 {
			continue // no answer, or the setup's
		}
		who := "buyers"
		if int(q.client) >= buyers {
			who = "bots"
		}
		k := key{who, outcome}
		byKey[k] = append(byKey[k], q.latency)
	}
	var out []OutcomeLatency
	for _, who := range []string{"buyers", "bots"} {
		for _, outcome := range []string{"served", "refused", "error"} {
			ls := byKey[key{who, outcome}]
			if len(ls) == 0 {
				continue
			}
			slices.Sort(ls)
			out = append(out, OutcomeLatency{Who: who, Outcome: outcome, Requests: len(ls),
				P50MS: ms(percentile(ls, 50)), P99MS: ms(percentile(ls, 99)), MaxMS: ms(ls[len(ls)-1])})
		}
	}
	return out
}

// Series are per-second counts, second k covering [T0+k, T0+k+1) seconds
// after on_sale_at.
type Series struct {
	T0 int `json:"t0_s"`
	// Requests by status class ("2xx", "4xx", "429", "5xx", "no answer"),
	// by the second they were sent.
	Requests map[string][]int `json:"requests_per_second"`
	// BuyerRequests are the buyers' alone (not the bots', nor the setup's).
	BuyerRequests map[string][]int `json:"buyer_requests_per_second"`
	Admissions    []int            `json:"admissions_per_second"`
	// Sold is the seats sold by the end of each second, as the buyers were told.
	Sold []int `json:"seats_sold"`
}

// statusClasses are the classes of Series.Requests, in the order charts
// stack them: "503" are the documented 503s (refusals), "5xx" every other.
var statusClasses = []string{"2xx", "3xx", "4xx", "429", "503", "5xx", "no answer"}

func statusClass(q request) string {
	switch {
	case q.status == 0:
		return "no answer"
	case q.status == 429:
		return "429"
	case q.kind == kindRefused:
		return "503"
	case q.status >= 500:
		return "5xx"
	case q.status >= 400:
		return "4xx"
	case q.status >= 300:
		return "3xx"
	}
	return "2xx"
}

func statusName(status int16) string {
	if status == 0 {
		return "no answer"
	}
	return strconv.Itoa(int(status))
}

// buildReport sums up a run.
func buildReport(o Options, sale Sale, rec *recorder, p played, checks []Check, limits limitsInForce, prepared time.Duration, started time.Time) *Report {
	requests, names, sold := rec.snapshot()
	r := &Report{
		Passed: true, Checks: checks,
		URL: o.URL, EventID: sale.EventID, OnSaleAt: sale.OnSaleAt, Seats: o.Seats, Buyers: o.Buyers, Bots: o.Bots,
		RoomRate: o.RoomRate, LeadS: o.Lead.Seconds(), SpreadS: o.Spread.Seconds(), DeclineRate: o.DeclineRate, Seed: o.Seed,
		HoldLimit: limits.holdBuyer(), StartedAt: started, EndedAt: p.ended, PreparedS: prepared.Seconds(),
		SaleS: p.ended.Sub(sale.OnSaleAt).Seconds(), SeatsSold: rec.seats.Load(),
		Outcomes: map[string]int{}, Requests: len(requests), ByStatus: map[string]int{},
		Refusals: map[string]int{}, Instances: map[string]int{},
		Lottery: lotteryOf(p.buyers, sale), Faults: p.faults,
	}
	for _, c := range checks {
		r.Passed = r.Passed && c.Passed
	}
	for _, b := range p.buyers {
		r.Outcomes[b.outcome]++
	}

	// Seconds relative to the opening: the epoch is the recorder's.
	offset := rec.epoch.Sub(sale.OnSaleAt)
	sec := func(d time.Duration) int { return int(math.Floor((d + offset).Seconds())) }
	t0, t1 := sec(0), sec(p.ended.Sub(rec.epoch))
	for _, q := range requests {
		t0, t1 = min(t0, sec(q.start)), max(t1, sec(q.start))
	}
	n := t1 - t0 + 1
	r.Series = Series{T0: t0, Requests: map[string][]int{}, BuyerRequests: map[string][]int{},
		Admissions: make([]int, n), Sold: make([]int, n)}
	for _, c := range statusClasses {
		r.Series.Requests[c], r.Series.BuyerRequests[c] = make([]int, n), make([]int, n)
	}

	latencies := map[string][]time.Duration{}
	byRoute := map[string]map[string]int{}
	for _, q := range requests {
		route := names[q.route]
		r.ByStatus[statusName(q.status)]++
		r.Instances[names[q.instance]]++
		switch q.kind {
		case kindRefused:
			r.Refused++
			r.Refusals[names[q.refused]]++
		case kindError:
			r.Errors++
		case kindNoAnswer:
			r.NoAnswer++
		}
		r.Series.Requests[statusClass(q)][sec(q.start)-t0]++
		if q.client >= 0 && int(q.client) < o.Buyers {
			r.Series.BuyerRequests[statusClass(q)][sec(q.start)-t0]++
		}
		if q.status != 0 {
			latencies[route] = append(latencies[route], q.latency)
		}
		if byRoute[route] == nil {
			byRoute[route] = map[string]int{}
		}
		byRoute[route][statusName(q.status)]++
	}
	for _, route := range slices.Sorted(maps.Keys(byRoute)) {
		ls := latencies[route]
		slices.Sort(ls)
		st := RouteStats{Route: route, ByStatus: byRoute[route]}
		for _, c := range byRoute[route] {
			st.Requests += c
		}
		if len(ls) > 0 {
			st.P50MS, st.P99MS, st.MaxMS = ms(percentile(ls, 50)), ms(percentile(ls, 99)), ms(ls[len(ls)-1])
		}
		r.Routes = append(r.Routes, st)
	}
	for _, b := range p.buyers {
		if !b.admittedAt.IsZero() {
			if k := int(math.Floor(b.admittedAt.Sub(sale.OnSaleAt).Seconds())) - t0; k >= 0 && k < n {
				r.Series.Admissions[k]++
			}
		}
	}
	r.SoldOutS = -1
	slices.SortFunc(sold, func(a, b soldAt) int { return cmp.Compare(a.at, b.at) })
	total := 0
	for _, s := range sold {
		if k := sec(s.at) - t0; k >= 0 && k < n {
			r.Series.Sold[k] += s.seats
		}
		if total += s.seats; total >= o.Seats && r.SoldOutS < 0 {
			r.SoldOutS = math.Round((s.at+offset).Seconds()*10) / 10
		}
	}
	for k := 1; k < n; k++ {
		r.Series.Sold[k] += r.Series.Sold[k-1]
	}
	r.PerInst = instanceStats(requests, names, p.ended.Sub(rec.epoch))
	r.Latencies = outcomeLatencies(requests, o.Buyers)
	r.Pollers = p.pollers
	r.Outage = outageOf(requests, names, limits, sale.HasRoom, offset, p.faults)
	return r
}

// instanceStats sums the requests up by instance, largest first.
func instanceStats(requests []request, names []string, ended time.Duration) []InstanceStats {
	first := time.Duration(math.MaxInt64)
	for _, q := range requests {
		if q.client >= 0 {
			first = min(first, q.start)
		}
	}
	span := max((ended - first).Seconds(), 1)
	type perSecond struct{ all, served, refused int }
	by := map[string]*InstanceStats{}
	seconds := map[string]map[int64]*perSecond{}
	for _, q := range requests {
		name := names[q.instance]
		st := by[name]
		if st == nil {
			st = &InstanceStats{Instance: name}
			by[name], seconds[name] = st, map[int64]*perSecond{}
		}
		s := int64(q.start / time.Second)
		ps := seconds[name][s]
		if ps == nil {
			ps = &perSecond{}
			seconds[name][s] = ps
		}
		st.Requests++
		ps.all++
		switch q.kind {
		case kindOK:
			st.Served++
			ps.served++
		case kindRefused:
			st.Refused++
			ps.refused++
		default:
			st.Errors++
		}
	}
	out := make([]InstanceStats, 0, len(by))
	for name, st := range by {
		for _, ps := range seconds[name] {
			st.PeakRPS = max(st.PeakRPS, ps.all)
			st.PeakServed = max(st.PeakServed, ps.served)
			st.PeakRefuse = max(st.PeakRefuse, ps.refused)
		}
		st.MeanServed = math.Round(float64(st.Served)/span*10) / 10
		st.MeanRefuse = math.Round(float64(st.Refused)/span*10) / 10
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b InstanceStats) int { return strings.Compare(a.Instance, b.Instance) })
	return out
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
