package onsale

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"time"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(part, whole int) string {
		if whole == 0 {
			return "0 %"
		}
		return fmt.Sprintf("%.0f %%", 100*float64(part)/float64(whole))
	},
	"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05.000 MST") },
	"secs": func(s float64) string { return fmt.Sprintf("%.1f s", s) },
	// took writes a short time: 17 ms, 2.4 s.
	"took": func(s float64) string {
		if s < 1 {
			return fmt.Sprintf("%.0f ms", s*1000)
		}
		return fmt.Sprintf("%.1f s", s)
	},
}).Parse(reportTemplate))

// The colours of the charts.
var classColors = map[string]string{
	"2xx": "#2e7d32", "3xx": "#1565c0", "4xx": "#f9a825", "429": "#ef6c00", "503": "#6d4c41", "5xx": "#c62828", "no answer": "#616161",
}

const (
	colorMain  = "#1565c0"
	colorOther = "#8e24aa"
	colorFault = "#c62828"
	colorOpen  = "#37474f"
)

// page is what the template is given.
type page struct {
	*Report
	Title                                     string
	Sold, Admissions, RequestsRate, BuyerRate template.HTML
	Latency, Refusals, Instances              template.HTML
	Outcomes                                  []count
	Statuses                                  []count
}

type count struct {
	Name string
	N    int
}

// sortedCounts lists counts largest first.
func sortedCounts(m map[string]int) []count {
	out := make([]count, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, count{k, m[k]})
	}
	slices.SortStableFunc(out, func(a, b count) int { return b.N - a.N })
	return out
}

// WriteHTML writes the report as a page of its own: inline CSS and SVG
// charts, no script, nothing fetched from elsewhere. A report read back from
// its report.json renders as it did.
func (r *Report) WriteHTML(w io.Writer) error {
	marks := []mark{{At: 0, Label: "on sale", Color: colorOpen}}
	for _, f := range r.Faults {
		marks = append(marks, mark{At: f.At, Label: f.Name, Color: colorFault})
		// The command's end: for kill-redis-master.sh --wait, the replica's
		// takeover.
		if f.Took >= 0.5 && f.Error == "" {
			marks = append(marks, mark{At: f.At + f.Took, Label: f.Name + ": done", Color: colorFault})
		}
	}
	floats := func(xs []int) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = float64(x)
		}
		return out
	}
	p := page{Report: r, Title: fmt.Sprintf("On-sale report: %d buyers, %d bots, %d seats", r.Buyers, r.Bots, r.Seats),
		Outcomes: sortedCounts(r.Outcomes), Statuses: sortedCounts(r.ByStatus)}
	p.Sold = timeChart{T0: r.Series.T0, Marks: marks, YLabel: "seats sold", HLine: float64(r.Seats), HLabel: fmt.Sprintf("%d seats", r.Seats),
		Series: []series{{Name: "seats sold", Color: colorMain, Values: floats(r.Series.Sold)}}}.svg()
	room := timeChart{T0: r.Series.T0, Marks: marks, Stacked: true, YLabel: "buyers admitted",
		Series: []series{{Name: "admitted", Color: colorMain, Values: floats(r.Series.Admissions)}}}
	if r.RoomRate > 0 {
		room.HLine, room.HLabel = float64(r.RoomRate), fmt.Sprintf("room rate %d/s", r.RoomRate)
		p.Admissions = room.svg()
	}
	p.RequestsRate = requestsChart(r.Series.T0, r.Series.Requests, marks)
	p.BuyerRate = requestsChart(r.Series.T0, r.Series.BuyerRequests, marks)

	lat := barChart{Names: []string{"p50", "p99"}, Colors: []string{colorMain, colorOther}, Unit: " ms"}
	for _, rs := range r.Routes {
		lat.Bars = append(lat.Bars, bar{Label: rs.Route, Values: []float64{rs.P50MS, rs.P99MS}})
	}
	p.Latency = lat.svg()
	p.Refusals = countBars(sortedCounts(r.Refusals), classColors["429"])
	inst := barChart{Names: []string{"served", "refused", "errors"}, Colors: []string{classColors["2xx"], classColors["429"], classColors["5xx"]}}
	for _, in := range r.PerInst {
		inst.Bars = append(inst.Bars, bar{Label: in.Instance, Values: []float64{float64(in.Served), float64(in.Refused), float64(in.Errors)}})
	}
	p.Instances = inst.svg()
	return reportPage.Execute(w, p)
}

// requestsChart stacks requests a second by status class.
func requestsChart(t0 int, byClass map[string][]int, marks []mark) template.HTML {
	var ss []series
	for _, c := range statusClasses {
		if slices.ContainsFunc(byClass[c], func(n int) bool { return n > 0 }) {
			vs := make([]float64, len(byClass[c]))
			for i, n := range byClass[c] {
				vs[i] = float64(n)
			}
			ss = append(ss, series{Name: c, Color: classColors[c], Values: vs})
		}
	}
	return timeChart{T0: t0, Marks: marks, Stacked: true, YLabel: "requests a second", Series: ss}.svg()
}

func countBars(cs []count, color string) template.HTML {
	c := barChart{Names: []string{"requests"}, Colors: []string{color}}
	for _, x := range cs {
		c.Bars = append(c.Bars, bar{Label: x.Name, Values: []float64{float64(x.N)}})
	}
	return c.svg()
}
