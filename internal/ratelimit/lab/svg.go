package lab

import (
	"fmt"
	"html"
	"strings"
)

// chartColors are the bars' colours, one an algorithm, in the rows' order.
var chartColors = []string{"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// BoundarySVG draws experiment 1 as a grouped bar chart: the requests each
// algorithm allowed per 100 ms around the boundary, a dashed line at the
// boundary and one at the limit.
func BoundarySVG(r *BoundaryResult) string {
	const (
		width, height           = 860, 420
		left, right, top, floor = 60, 250, 40, 360
	)
	peak := 1
	limit := 0
	for _, row := range r.Rows {
		for _, v := range row.Bins {
			peak = max(peak, v)
		}
		if row.ID == "log" {
			limit = row.Bound
		}
	}
	peak = max(peak, limit)
	yMax := ((peak + 19) / 20) * 20
	y := func(v int) float64 { return floor - float64(v)*float64(floor-top)/float64(yMax) }
	nBins := len(r.Rows[0].Bins)
	groupW := float64(width-left-right) / float64(nBins)
	barW := (groupW - 10) / float64(len(r.Rows))

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" font-weight="bold">Requests allowed per %d ms around a window boundary (%s)</text>`+"\n", left, r.BinMs, html.EscapeString(r.Limit))
	for v := 0; v <= yMax; v += 20 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n",
			left, width-right, y(v), y(v), left-6, y(v)+4, v)
	}
	for i := range nBins {
		x0 := float64(left) + float64(i)*groupW + 5
		for j, row := range r.Rows {
			v := row.Bins[i]
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d</title></rect>`+"\n",
				x0+float64(j)*barW, y(v), barW, float64(floor)-y(v), chartColors[j%len(chartColors)], html.EscapeString(rowLabel(row)), v)
		}
		lo := r.BinStartMs + i*r.BinMs
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%+d…%+d</text>`+"\n", x0+groupW/2-5, floor+18, lo, lo+r.BinMs)
	}
	// The boundary, between the bins that meet at 0 ms.
	bx := float64(left) + float64(-r.BinStartMs/r.BinMs)*groupW
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black" stroke-dasharray="6 4"/><text x="%.1f" y="%d" text-anchor="middle">boundary</text>`+"\n", bx, bx, top, floor, bx, top-4)
	if limit > 0 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="2 3"/><text x="%d" y="%.1f" fill="#555">limit %d/s</text>`+"\n",
			left, width-right, y(limit), y(limit), width-right-70, y(limit)-4, limit)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">ms from the boundary (Redis's clock)</text>`+"\n", left+(width-left-right)/2-110, floor+40)
	for j, row := range r.Rows {
		ly := top + 10 + j*20
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s: %d in 1 s</text>`+"\n",
			width-right+15, ly, chartColors[j%len(chartColors)], width-right+32, ly+10, html.EscapeString(rowLabel(row)), row.MaxInWindow)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func rowLabel(row BoundaryRow) string {
	if row.Aimed {
		return row.ID + " (aimed)"
	}
	return row.ID
}
