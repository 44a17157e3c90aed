package onsale

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// PrintSummary writes what the run found for a terminal: the outcome, each
// check with PASS, FAIL or skip, and where the report is.
func (r *Result) PrintSummary(w io.Writer) {
	rep := r.Report
	fmt.Fprintf(w, "\nsale: %d of %d seats sold, the last buyer done %.1f s after the opening%s; %d requests: %d refused, %d 5xx, %d no answer\n",
		rep.SeatsSold, rep.Seats, rep.SaleS, soldOutText(rep), rep.Requests, rep.Refused, rep.Errors, rep.NoAnswer)
	var outcomes []string
	for _, c := range sortedCounts(rep.Outcomes) {
		outcomes = append(outcomes, fmt.Sprintf("%s %d", c.Name, c.N))
	}
	fmt.Fprintf(w, "buyers: %s\n", strings.Join(outcomes, ", "))
	var refusals []string
	for _, k := range slices.Sorted(maps.Keys(rep.Refusals)) {
		refusals = append(refusals, fmt.Sprintf("%s %d", k, rep.Refusals[k]))
	}
	if len(refusals) > 0 {
		fmt.Fprintf(w, "refused: %s\n", strings.Join(refusals, ", "))
	}
	for _, in := range rep.PerInst {
		fmt.Fprintf(w, "instance %s: %d requests, %d served (%.0f/s on average, %d at the peak), %d refused (%.0f/s, %d at the peak), %d errors\n",
			in.Instance, in.Requests, in.Served, in.MeanServed, in.PeakServed, in.Refused, in.MeanRefuse, in.PeakRefuse, in.Errors)
	}
	for _, rs := range rep.Routes {
		if rs.Route == routeHold || rs.Route == routeOrder {
			fmt.Fprintf(w, "%s: %d requests, p50 %.1f ms, p99 %.1f ms\n", rs.Route, rs.Requests, rs.P50MS, rs.P99MS)
		}
	}
	var latencies []string
	for _, l := range rep.Latencies {
		latencies = append(latencies, fmt.Sprintf("%s %s %d (p50 %.1f ms, p99 %.1f ms)", l.Who, l.Outcome, l.Requests, l.P50MS, l.P99MS))
	}
	if len(latencies) > 0 {
		fmt.Fprintf(w, "latency by outcome: %s\n", strings.Join(latencies, "; "))
	}
	if pl := rep.Pollers; pl != nil {
		fmt.Fprintf(w, "pollers: %d waited, %d joins, %d polls (p50 %.1f ms, p99 %.1f ms), by status %v; their waits ended %v\n",
			pl.Pollers, pl.Joins, pl.Polls, pl.P50MS, pl.P99MS, pl.ByStatus, pl.Ended)
		for _, ph := range pl.Redis {
			fmt.Fprintf(w, "redis, %s\n", ph.Text())
		}
		if pl.RedisNote != "" {
			fmt.Fprintf(w, "redis: %s\n", pl.RedisNote)
		}
	}
	if o := rep.Outage; o.FailOpen.Requests > 0 || o.RoomUnavailable.Requests > 0 || o.FaultS != nil {
		fmt.Fprintf(w, "outage: %s\n", o.Text())
	}
	for _, f := range rep.Faults {
		fmt.Fprintf(w, "fault: %s at T+%.1fs, done at T+%.1fs (took %.1fs)%s\n", f.Name, f.At, f.At+f.Took, f.Took, errText(f.Error))
	}
	fmt.Fprintln(w, "checks:")
	for _, c := range rep.Checks {
		verdict := "PASS"
		switch {
		case c.Skipped:
			verdict = "skip"
		case !c.Passed:
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %-4s  %s: %s\n", verdict, c.Name, c.Detail)
	}
	if r.HTMLPath != "" {
		fmt.Fprintf(w, "report: %s\n        %s\n        %s\n        %s\n", r.HTMLPath, r.JSONPath, r.RequestsPath, r.BuyersPath)
	}
}

// soldOutText says when the last seat was sold, if every one was.
func soldOutText(rep *Report) string {
	if rep.SoldOutS < 0 {
		return ""
	}
	return fmt.Sprintf(" (sold out at T+%.1fs)", rep.SoldOutS)
}

// Text says what the clients saw of an outage, in a line.
func (o OutageStats) Text() string {
	var parts []string
	if w := o.FailOpen; w.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d holds and joins let through without a limit's decision (failed open) from T%+.1fs to T%+.1fs (%.1f s, in %d distinct seconds)",
			w.Requests, w.FirstS, w.LastS, w.SpanS(), w.Seconds))
	}
	if w := o.RoomUnavailable; w.Requests > 0 {
		var by []string
		for _, in := range slices.Sorted(maps.Keys(o.RoomUnavailableBy)) {
			b := o.RoomUnavailableBy[in]
			by = append(by, fmt.Sprintf("%s %d from T%+.1fs to T%+.1fs", in, b.Requests, b.FirstS, b.LastS))
		}
		parts = append(parts, fmt.Sprintf("%d answers 503 from the waiting room (failed closed) from T%+.1fs to T%+.1fs (%.1f s, in %d distinct seconds; by instance: %s)",
			w.Requests, w.FirstS, w.LastS, w.SpanS(), w.Seconds, strings.Join(by, ", ")))
	}
	if o.FaultS != nil {
		after := func(w Window) string {
			if w.Requests == 0 {
				return "none"
			}
			return fmt.Sprintf("%d from T%+.1fs to T%+.1fs (%.1f s, in %d distinct seconds)", w.Requests, w.FirstS, w.LastS, w.SpanS(), w.Seconds)
		}
		parts = append(parts, fmt.Sprintf("from the first fault (T%+.1fs) on: failed open %s; the room's 503s %s",
			*o.FaultS, after(o.FailOpenAfterFault), after(o.RoomUnavailableAfterFault)))
	}
	if len(parts) == 0 {
		return "none seen"
	}
	return strings.Join(parts, "; ")
}
