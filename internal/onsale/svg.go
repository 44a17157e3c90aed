package onsale

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// The charts are SVG written here, inline in the page: no script, no
// external resource.

// chart geometry, in viewBox units: the marks' labels above the plot, the
// time axis and the legend below it.
const (
	chartW, chartH = 600, 300
	padL, padR     = 56, 16
	padT, padB     = 48, 60 // three rows of marks' labels; the axis and the legend
	barTop         = 12
)

// series is one named sequence of values, one a second.
type series struct {
	Name   string
	Color  string
	Values []float64
}

// mark is a vertical line at a moment: the opening, a fault.
type mark struct {
	At    float64 // seconds after on_sale_at
	Label string
	Color string
}

// timeChart draws series over seconds t0, t0+1, …: stacked columns when
// stacked, else lines; hline, when above 0, is a dashed horizontal line (a
// total, a rate).
type timeChart struct {
	T0      int
	Series  []series
	Stacked bool
	YLabel  string
	HLine   float64
	HLabel  string
	Marks   []mark
}

func (c timeChart) svg() template.HTML {
	n := 0
	for _, s := range c.Series {
		n = max(n, len(s.Values))
	}
	if n == 0 {
		return emptyChart("no data")
	}
	top := c.HLine
	for i := range n {
		sum := 0.0
		for _, s := range c.Series {
			if i < len(s.Values) {
				if c.Stacked {
					sum += s.Values[i]
				} else {
					sum = math.Max(sum, s.Values[i])
				}
			}
		}
		top = math.Max(top, sum)
	}
	top = math.Max(top, c.HLine*1.12) // room above the line for its label
	ticks := niceTicks(top, 5)
	yMax := ticks[len(ticks)-1]
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(t float64) float64 { return padL + (t-float64(c.T0))/float64(n)*plotW }
	y := func(v float64) float64 { return padT + plotH - v/yMax*plotH }

	var b strings.Builder
	open(&b)
	yAxis(&b, ticks, y, c.YLabel)
	for _, t := range timeTicks(c.T0, n) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/>`, x(float64(t)), padT, x(float64(t)), chartH-padB)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`, x(float64(t)), chartH-padB+16, tick(t))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis" text-anchor="middle">seconds after the sale opened</text>`, padL+int(plotW)/2, chartH-padB+32)
	if c.Stacked {
		w := plotW / float64(n)
		for i := range n {
			base := 0.0
			for _, s := range c.Series {
				if i >= len(s.Values) || s.Values[i] == 0 {
					continue
				}
				fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s: %s at T%+ds</title></rect>`,
					x(float64(c.T0+i))+w*0.05, y(base+s.Values[i]), math.Max(w*0.9, 0.5), y(base)-y(base+s.Values[i]),
					s.Color, esc(s.Name), num(s.Values[i]), c.T0+i)
				base += s.Values[i]
			}
		}
	} else {
		for _, s := range c.Series {
			var pts []string
			for i, v := range s.Values {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(c.T0+i)+1), y(v)))
			}
			fmt.Fprintf(&b, `<polyline points="%s %s" fill="none" stroke="%s" stroke-width="2"/>`,
				fmt.Sprintf("%.1f,%.1f", x(float64(c.T0)), y(0)), strings.Join(pts, " "), s.Color)
		}
	}
	if c.HLine > 0 {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="hline"/>`, padL, y(c.HLine), chartW-padR, y(c.HLine))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="note" text-anchor="end">%s</text>`, chartW-padR-4, y(c.HLine)-4, esc(c.HLabel))
	}
	rows := markRows(c.Marks, x)
	for i, m := range c.Marks {
		if rows[i] < 0 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="4 3" stroke-width="1.5"/>`,
			x(m.At), 6+14*rows[i], x(m.At), chartH-padB, m.Color)
		anchor, dx := "start", 3.0
		if x(m.At) > chartW*0.6 {
			anchor, dx = "end", -3
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="note" fill="%s" text-anchor="%s">%s</text>`,
			x(m.At)+dx, 15+14*rows[i], m.Color, anchor, esc(m.Label))
	}
	legend(&b, c.Series)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// markRows puts each mark's label on the first of three rows above the plot
// where it overlaps no label already there (about 6 units a character);
// -1 for a mark out of range or with no room left.
func markRows(marks []mark, x func(float64) float64) []int {
	rows := make([]int, len(marks))
	var ends [3]float64 // the right end of each row's last label
	for i := range ends {
		ends[i] = math.Inf(-1)
	}
	for i, m := range marks {
		rows[i] = -1
		at := x(m.At)
		if at < padL || at > chartW-padR {
			continue
		}
		from, to := at, at+6*float64(len(m.Label))+6
		if at > chartW*0.6 {
			from, to = at-6*float64(len(m.Label))-6, at
		}
		for r := range ends {
			if from > ends[r] {
				rows[i], ends[r] = r, to
				break
			}
		}
	}
	return rows
}

// bar is one horizontal bar, or a group of them (one a series).
type bar struct {
	Label  string
	Values []float64
}

// barChart draws horizontal bars, a group a label, one bar a series
// (Names and Colors), with the value written at its end in Unit.
type barChart struct {
	Bars   []bar
	Names  []string
	Colors []string
	Unit   string
}

func (c barChart) svg() template.HTML {
	if len(c.Bars) == 0 {
		return emptyChart("none")
	}
	const labelW, rowGap, barH = 210, 10, 14
	group := barH * len(c.Colors)
	h := barTop + len(c.Bars)*(group+rowGap) + 24
	top := 0.0
	for _, b := range c.Bars {
		for _, v := range b.Values {
			top = math.Max(top, v)
		}
	}
	top = niceTicks(top, 4)[len(niceTicks(top, 4))-1]
	plotW := float64(chartW - labelW - padR - 60)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg viewBox="0 0 %d %d" role="img" xmlns="http://www.w3.org/2000/svg">`, chartW, h)
	for i, b := range c.Bars {
		y0 := barTop + i*(group+rowGap)
		fmt.Fprintf(&sb, `<text x="%d" y="%d" class="label" text-anchor="end">%s</text>`, labelW-8, y0+group/2+4, esc(b.Label))
		for k, v := range b.Values {
			w := v / top * plotW
			fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %s%s</title></rect>`,
				labelW, y0+k*barH, math.Max(w, 1), barH-2, c.Colors[k], esc(b.Label), esc(c.Names[k]), num(v), esc(c.Unit))
			fmt.Fprintf(&sb, `<text x="%.1f" y="%d" class="tick">%s%s</text>`, float64(labelW)+math.Max(w, 1)+4, y0+k*barH+barH-4, num(v), esc(c.Unit))
		}
	}
	if len(c.Names) > 1 {
		for k, name := range c.Names {
			fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" class="tick">%s</text>`,
				labelW+k*90, h-16, c.Colors[k], labelW+k*90+14, h-7, esc(name))
		}
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

func open(b *strings.Builder) {
	fmt.Fprintf(b, `<svg viewBox="0 0 %d %d" role="img" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH)
}

func emptyChart(text string) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg viewBox="0 0 %d 60" role="img" xmlns="http://www.w3.org/2000/svg"><text x="%d" y="34" class="axis">%s</text></svg>`,
		chartW, padL, esc(text)))
}

func yAxis(b *strings.Builder, ticks []float64, y func(float64) float64, label string) {
	for _, t := range ticks {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/>`, padL, y(t), chartW-padR, y(t))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`, padL-6, y(t)+4, num(t))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axisline"/>`, padL, padT, padL, chartH-padB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axisline"/>`, padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(b, `<text x="12" y="%d" class="axis" text-anchor="middle" transform="rotate(-90 12 %d)">%s</text>`,
		padT+(chartH-padT-padB)/2, padT+(chartH-padT-padB)/2, esc(label))
}

// legend names the series under the time axis.
func legend(b *strings.Builder, ss []series) {
	if len(ss) < 2 {
		return
	}
	x := padL
	for _, s := range ss {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" class="tick">%s</text>`,
			x, chartH-14, s.Color, x+14, chartH-5, esc(s.Name))
		x += 28 + 7*len(s.Name)
	}
}

// niceTicks are 0 and round steps up to at least top (1, 2 or 5 × 10ⁿ apart).
func niceTicks(top float64, want int) []float64 {
	if top <= 0 {
		top = 1
	}
	raw := top / float64(want)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := 0.0; ; v += step {
		out = append(out, v)
		if v >= top-1e-9 {
			return out
		}
	}
}

// timeTicks are the seconds labelled on a time axis: about 8 of them, on
// round numbers, 0 (the opening) among them when it is in range.
func timeTicks(t0, n int) []int {
	step := 1
	for _, s := range []int{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		step = s
		if n/s <= 8 {
			break
		}
	}
	var out []int
	for t := t0 - ((t0%step)+step)%step; t <= t0+n; t += step {
		if t >= t0 {
			out = append(out, t)
		}
	}
	return out
}

func tick(t int) string {
	if t > 0 {
		return fmt.Sprintf("+%d", t)
	}
	return fmt.Sprint(t)
}

// num writes a value briefly: 3, 2.5, 1.2k, 3.4M.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trim(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trim(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return trim(fmt.Sprintf("%.1f", v))
	}
	return trim(fmt.Sprintf("%.2f", v))
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }
