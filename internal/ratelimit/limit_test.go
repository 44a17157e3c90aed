package ratelimit

import (
	"testing"
	"time"
)

func TestParseLimit(t *testing.T) {
	t.Parallel()
	good := []struct {
		spec string
		want Limit
		text string // String() of the result
	}{
		{"10/1m", Limit{Rate: 10, Period: time.Minute, Burst: 10}, "10/1m"},
		{"20/1s burst 50", Limit{Rate: 20, Period: time.Second, Burst: 50}, "20/1s burst 50"},
		{"20/1h", Limit{Rate: 20, Period: time.Hour, Burst: 20}, "20/1h"},
		{"5/m", Limit{Rate: 5, Period: time.Minute, Burst: 5}, "5/1m"},
		{"200/1s", Limit{Rate: 200, Period: time.Second, Burst: 200}, "200/1s"},
		{"  3/250ms   burst 1 ", Limit{Rate: 3, Period: 250 * time.Millisecond, Burst: 1}, "3/250ms burst 1"},
		{"5/90s", Limit{Rate: 5, Period: 90 * time.Second, Burst: 5}, "5/90s"},
	}
	for _, tc := range good {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseLimit(tc.spec)
			if err != nil {
				t.Fatalf("ParseLimit(%q): %v", tc.spec, err)
			}
			if got != tc.want {
				t.Fatalf("ParseLimit(%q) = %+v, want %+v", tc.spec, got, tc.want)
			}
			if got.String() != tc.text {
				t.Fatalf("String() = %q, want %q", got.String(), tc.text)
			}
			again, err := ParseLimit(got.String())
			if err != nil || again != got {
				t.Fatalf("ParseLimit(String()) = %+v, %v; want %+v", again, err, got)
			}
		})
	}

	bad := []string{
		"",
		"10",
		"0/1s",
		"10/0s",
		"10/1s burst",
		"10/1s burst 0",
		"10/1s bust 5",
		"x/1s",
		"-1/1s",
		"10/",
		"10/1s burst x",
		"10/1s burst 5 more",
		"10/forever",
		"10/1500us",
		"2000000/1s",
	}
	for _, spec := range bad {
		t.Run("bad "+spec, func(t *testing.T) {
			if got, err := ParseLimit(spec); err == nil {
				t.Fatalf("ParseLimit(%q) = %+v, want an error", spec, got)
			}
		})
	}
}

func TestLimitFigures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec               string
		interval, full     time.Duration
		microIV, microsTau int64
	}{
		{"10/1m", 6 * time.Second, time.Minute, 6_000_000, 60_000_000},
		{"20/1s burst 50", 50 * time.Millisecond, 2500 * time.Millisecond, 50_000, 2_500_000},
		{"500/1s", 2 * time.Millisecond, time.Second, 2000, 1_000_000},
		{"7/1s", 142857142 * time.Nanosecond, time.Second, 142_858, 7 * 142_858},
	}
	for _, tc := range tests {
		l, err := ParseLimit(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if l.Interval() != tc.interval || l.TimeToFull() != tc.full {
			t.Errorf("%s: Interval %v TimeToFull %v, want %v %v", tc.spec, l.Interval(), l.TimeToFull(), tc.interval, tc.full)
		}
		if iv, tau := l.gcra(); iv != tc.microIV || tau != tc.microsTau {
			t.Errorf("%s: gcra() = %d, %d; want %d, %d", tc.spec, iv, tau, tc.microIV, tc.microsTau)
		}
	}
	if err := (Limit{Rate: 1, Period: time.Hour, Burst: 10_000}).Validate(); err == nil {
		t.Error("a bucket that takes more than a year to fill was accepted")
	}
}
