package ratelimit

import (
	"testing"
	"time"
)

func TestTightest(t *testing.T) {
	t.Parallel()
	enforce := Setting{Limit: PerMinute(10), Mode: Enforce}
	r := func(name Name, o Outcome, allowed bool, rem int, retry time.Duration) Result {
		return Result{Limit: name, Setting: enforce, Outcome: o, Allowed: allowed, Remaining: rem,
			ResetAfter: time.Duration(10-rem) * time.Second, RetryAfter: retry}
	}
	tests := []struct {
		results []Result
		want    Name
	}{
		{[]Result{r("a", OutcomeAllowed, true, 7, 0), r("b", OutcomeAllowed, true, 150, 0)}, "a"},
		{[]Result{r("a", OutcomeAllowed, true, 0, 0), r("b", OutcomeDenied, false, 0, time.Millisecond)}, "b"},
		{[]Result{r("a", OutcomeDenied, false, 0, time.Second), r("b", OutcomeFallbackDenied, false, 0, 6*time.Second)}, "b"},
		{[]Result{r("a", OutcomeFailOpen, true, 0, 0), r("b", OutcomeFallbackAllowed, true, 9, 0)}, "b"},
		{[]Result{r("a", OutcomeOff, true, 0, 0), r("b", OutcomeSkipped, true, 0, 0)}, ""},
	}
	for i, tc := range tests {
		got, ok := Decision{Results: tc.results}.Tightest()
		if ok != (tc.want != "") || got.Limit != tc.want {
			t.Errorf("case %d: Tightest = %q, %v; want %q", i, got.Limit, ok, tc.want)
		}
	}
}

func TestHashSlot(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]int{"123456789": 12739, "foo": 12182, "{foo}.bar": 12182,
		"rl:{foo}": 12182, "{user1000}.following": 3443, "{user1000}.followers": 3443} {
		if got := hashSlot(key); got != want {
			t.Errorf("hashSlot(%q) = %d, want %d", key, got, want)
		}
	}
	if hashSlot("{}foo") == hashSlot("foo") {
		t.Error("an empty hash tag was used")
	}
}
