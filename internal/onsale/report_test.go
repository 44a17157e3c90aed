package onsale

import (
	"bytes"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSpearman(t *testing.T) {
	t.Parallel()
	up := []float64{1, 2, 3, 4, 5}
	for name, c := range map[string]struct {
		ys   []float64
		want float64
	}{
		"the same order":          {[]float64{10, 20, 30, 40, 50}, 1},
		"the reverse":             {[]float64{5, 4, 3, 2, 1}, -1},
		"monotone, not linear":    {[]float64{1, 8, 27, 64, 125}, 1},
		"ties share a mean rank":  {[]float64{1, 1, 2, 2, 3}, 0.9487},
		"a constant is undefined": {[]float64{7, 7, 7, 7, 7}, 0},
	} {
		if got := spearman(up, c.ys); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%s: ρ = %.4f, want %.4f", name, got, c.want)
		}
	}
	// A lottery: independent orders give |ρ| well under the check's threshold.
	rng := rand.New(rand.NewPCG(1, 2))
	xs, ys := make([]float64, 500), make([]float64, 500)
	for i := range xs {
		xs[i], ys[i] = float64(i), rng.Float64()
	}
	if rho := spearman(xs, ys); math.Abs(rho) > 0.2 {
		t.Errorf("ρ of independent orders = %.3f", rho)
	}
}

func TestMaxInWindow(t *testing.T) {
	t.Parallel()
	s := func(xs ...float64) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x * float64(time.Second))
		}
		return out
	}
	for _, c := range []struct {
		times []time.Duration
		want  int
	}{
		{nil, 0},
		{s(0, 1, 2), 3},
		{s(0, 59.9, 60, 119.95), 2}, // windows are half-open: [t, t+60 s)
		{s(5, 0, 30, 61, 62), 4},    // unsorted: 5, 30, 61, 62
	} {
		if got := maxInWindow(c.times, time.Minute); got != c.want {
			t.Errorf("maxInWindow(%v) = %d, want %d", c.times, got, c.want)
		}
	}
}

func TestSectionsMakeTheSeatsAskedFor(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 25, 100, 1000, 1013, 4999, 200_000} {
		ss := sections(n, 4500)
		total := 0
		for _, s := range ss {
			total += s.Rows * s.SeatsPerRow
			if s.Rows < 1 || s.SeatsPerRow < 1 || s.PriceCents < 0 {
				t.Errorf("%d seats: section %+v", n, s)
			}
		}
		if total != n || len(ss) > maxSections {
			t.Errorf("%d seats: %d seats in %d sections", n, total, len(ss))
		}
	}
}

func TestPeriodIsWrittenAsLimitsAre(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{time.Minute: "1m", time.Second: "1s", time.Hour: "1h", 90 * time.Second: "1m30s", 1500 * time.Millisecond: "1.5s"} {
		if got := period(d); got != want {
			t.Errorf("period(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestReportPageStandsAlone: the page renders every chart from a report, with
// no script and nothing fetched from elsewhere, and escapes what it shows.
func TestReportPageStandsAlone(t *testing.T) {
	t.Parallel()
	r := &Report{
		Passed: false,
		Checks: []Check{{Name: checkSoldOnce, Passed: true, Detail: "fine"}, {Name: checkNo5xx, Detail: "500 <script>alert(1)</script>"}},
		URL:    "http://127.0.0.1:8080", EventID: "e", OnSaleAt: time.Now(), Seats: 100, Buyers: 300, Bots: 20, RoomRate: 50,
		HoldLimit: defaultHoldLimit, Outcomes: map[string]int{outcomeBought: 40, outcomeSoldOut: 260},
		Requests: 10, ByStatus: map[string]int{"200": 8, "429": 2}, Refusals: map[string]int{"edge": 2},
		Instances: map[string]int{"i1": 4, "i2": 4, "-": 2},
		Routes:    []RouteStats{{Route: routeHold, Requests: 10, P50MS: 3, P99MS: 40, ByStatus: map[string]int{"201": 10}}},
		PerInst:   []InstanceStats{{Instance: "i1", Requests: 4, Served: 4, PeakRPS: 2}, {Instance: "-", Requests: 2, Refused: 2}},
		Outage: OutageStats{RoomUnavailable: Window{Requests: 3, FirstS: 1.2, LastS: 4.5, Seconds: 4},
			RoomUnavailableBy: map[string]Window{"i1": {Requests: 3, FirstS: 1.2, LastS: 4.5, Seconds: 4}}},
		SoldOutS: 2.5,
		Faults:   []FaultResult{{Name: "kill <a master>", At: 1, Took: 1.5}},
		Series: Series{T0: -3, Admissions: []int{0, 0, 0, 50, 50, 20},
			Sold: []int{0, 0, 0, 40, 90, 100}, Requests: map[string][]int{"2xx": {1, 2, 3, 4, 5, 6}, "429": {0, 0, 1, 1, 0, 0}}},
	}
	var out bytes.Buffer
	if err := r.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if n := strings.Count(page, "<svg"); n != 7 {
		t.Errorf("%d charts, want 7", n)
	}
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url("} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page holds %q: it must stand alone, without scripts", bad)
		}
	}
	if !strings.Contains(page, "kill &lt;a master&gt;") {
		t.Errorf("a fault's name is not escaped")
	}
	if !strings.Contains(page, "kill &lt;a master&gt;: done") {
		t.Errorf("the charts do not mark when the fault's command was done (with --wait: the takeover)")
	}
	for _, want := range []string{"T+2.5 s", "3 answers 503 from the waiting room", "<code>i1</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if regexp.MustCompile(`NaN|Inf|<no value>`).MatchString(page) {
		t.Errorf("the page shows NaN, Inf or <no value>")
	}
}
