package lab

import "fmt"

// report is experiment 1's table.
func (r *BoundaryResult) report() *table {
	t := &table{title: fmt.Sprintf("1. Boundary: %s, %d requests at %+.0f ms and %d at %+.0f ms around a boundary of Redis's clock",
		r.Limit, r.Requests, r.BeforeMs, r.Requests, r.AfterMs),
		header: []string{"algorithm", "burst 1", "burst 2", "most in any 1 s", "× limit", "bound", "lab"}}
	limit := float64(0)
	if row, ok := r.Row("log"); ok {
		limit = float64(row.Bound)
	}
	for _, row := range r.Rows {
		name := row.Name
		if row.Aimed {
			name += ", aimed at its reset"
		}
		ratio := "—"
		if limit > 0 {
			ratio = fixed(float64(row.MaxInWindow)/limit, 2)
		}
		if row.Error != "" {
			name += " (error: " + row.Error + ")"
		}
		t.add(name, fmt.Sprint(row.Burst1), fmt.Sprint(row.Burst2), fmt.Sprint(row.MaxInWindow), ratio,
			"≤ "+fmt.Sprint(row.Bound), labInt(row.Lab))
	}
	if !r.Valid {
		t.note("TIMING NOT MET after %d attempts: a burst crossed the boundary (the machine was too busy); the figures are not the experiment's.", r.Attempts)
	} else if r.Attempts > 1 {
		t.note("Made %d times: a busy machine stretched a burst across the boundary before.", r.Attempts)
	}
	if row, ok := r.Row("fixed"); ok {
		t.note("Fixed window %d (lab %d): its counter resets at the boundary, so both bursts fit in one second: 2× the limit, and no setting changes that.", row.MaxInWindow, LabBoundaryFixed)
	}
	if row, ok := r.Row("log"); ok {
		t.note("Sliding log %d (lab %d): exact, because it remembers every admission of the last second; burst 2 is refused whole.", row.MaxInWindow, LabBoundaryLog)
	}
	if row, ok := r.Row("counter"); ok {
		t.note("Sliding counter %d (lab %d): it weighs the previous window's count by the share still in view; burst 2 was answered by %.0f ms into the new window, so about %d more got in (the lab's 105: about 50 ms in).",
			row.MaxInWindow, LabBoundaryCounter, row.LastDecisionMs, row.Burst2)
	}
	if row, ok := r.Row("bucket"); ok {
		t.note("Token bucket %d (lab %d): the full bucket plus what it refilled between the bursts, at most %s over the %.0f ms from burst 1's start to burst 2's end (the bound). The lab's 119 implies bursts about 190 ms apart, the gap this run copies.",
			row.MaxInWindow, LabBoundaryBucket, r.Limit, row.SpanMs)
	}
	t.note("Stagedoor and redis_rate are GCRA: a token bucket kept as one number, so the bucket's figure, give or take a token of rounding.")
	if row, ok := r.Row("ulule"); ok {
		aimed := row
		for _, x := range r.Rows {
			if x.Aimed {
				aimed = x
			}
		}
		t.note("ulule/limiter is a fixed window that opens at a key's first request, not on the clock: the clock's boundary is nothing to it (%d). Its reset is in its X-RateLimit-Reset header, though: a client that aims at it gets 2× again (%d).",
			row.MaxInWindow, aimed.MaxInWindow)
	}
	return t
}
