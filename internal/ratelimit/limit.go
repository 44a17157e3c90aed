package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limit is a token bucket: Burst tokens, refilled at Rate tokens per Period.
// A bucket that has been idle for Period·Burst/Rate is full again.
//
// Limit{Rate: 10, Period: time.Minute, Burst: 10} (written "10/1m") lets a
// caller spend 10 at once and then one every 6 seconds.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// PerSecond returns a limit of rate a second with a burst of rate.
func PerSecond(rate int) Limit { return Limit{Rate: rate, Period: time.Second, Burst: rate} }

// PerMinute returns a limit of rate a minute with a burst of rate.
func PerMinute(rate int) Limit { return Limit{Rate: rate, Period: time.Minute, Burst: rate} }

// PerHour returns a limit of rate an hour with a burst of rate.
func PerHour(rate int) Limit { return Limit{Rate: rate, Period: time.Hour, Burst: rate} }

// Interval is the time in which the bucket earns one token.
func (l Limit) Interval() time.Duration {
	return time.Duration(int64(l.Period) / int64(l.Rate))
}

// TimeToFull is the time in which the rate refills an empty bucket.
func (l Limit) TimeToFull() time.Duration {
	return time.Duration(float64(l.Period) * float64(l.Burst) / float64(l.Rate))
}

// Validate reports whether the limit can be enforced.
func (l Limit) Validate() error {
	switch {
	case l.Rate < 1:
		return errors.New("rate must be at least 1")
	case l.Period < time.Millisecond:
		return errors.New("period must be at least 1ms")
	case l.Burst < 1:
		return errors.New("burst must be at least 1")
	case l.Period%time.Millisecond != 0:
		return errors.New("period must be a whole number of milliseconds")
	case int64(l.Period/time.Microsecond) < int64(l.Rate):
		return errors.New("rate must be at most one a microsecond")
	case int64(l.Burst) > maxTolerance/l.micros():
		return errors.New("burst·period/rate (the time to fill an empty bucket) must be at most a year")
	}
	return nil
}

// maxTolerance bounds the time to fill an empty bucket (a year, in microseconds), so
// that every figure of the bucket stays exact in a Lua number (a float64).
const maxTolerance = int64(366 * 24 * time.Hour / time.Microsecond)

// micros is the emission interval in whole microseconds: the period divided by the
// rate, rounded up. A limit of 500/1s earns a token every 2000 µs exactly; 7/1s one
// every 142 858 µs, 7 ppm slower than the exact 142 857.14 µs, never faster.
func (l Limit) micros() int64 {
	p, r := int64(l.Period/time.Microsecond), int64(l.Rate)
	return (p + r - 1) / r
}

// gcra returns the bucket as the GCRA sees it: the emission interval and the burst
// tolerance (the time an empty bucket takes to fill), both in microseconds.
func (l Limit) gcra() (interval, tau int64) {
	iv := l.micros()
	return iv, iv * int64(l.Burst)
}

// String writes the limit the way ParseLimit reads it, such as "20/1s burst 50".
func (l Limit) String() string {
	s := strconv.Itoa(l.Rate) + "/" + formatPeriod(l.Period) // no fmt: refusals print it
	if l.Burst != l.Rate {
		s += " burst " + strconv.Itoa(l.Burst)
	}
	return s
}

// ParseLimit reads a limit written "rate/period [burst N]": "10/1m", "20/1s burst 50",
// "20/1h". The period is a Go duration; a bare unit ("10/m") means one of it. The
// burst defaults to the rate.
func ParseLimit(spec string) (Limit, error) {
	fields := strings.Fields(spec)
	if len(fields) != 1 && len(fields) != 3 {
		return Limit{}, fmt.Errorf("%q is not of the form rate/period [burst N], such as 10/1m or 20/1s burst 50", spec)
	}
	rateText, periodText, ok := strings.Cut(fields[0], "/")
	if !ok {
		return Limit{}, fmt.Errorf("%q has no \"/\" between rate and period (such as 10/1m)", spec)
	}
	rate, err := strconv.Atoi(rateText)
	if err != nil || rate < 1 {
		return Limit{}, fmt.Errorf("%q: rate %q is not a whole number of at least 1", spec, rateText)
	}
	period, err := parsePeriod(periodText)
	if err != nil {
		return Limit{}, fmt.Errorf("%q: %w", spec, err)
	}
	l := Limit{Rate: rate, Period: period, Burst: rate}
	if len(fields) == 3 {
		if fields[1] != "burst" {
			return Limit{}, fmt.Errorf("%q: expected \"burst N\" after the rate, found %q", spec, fields[1])
		}
		burst, err := strconv.Atoi(fields[2])
		if err != nil || burst < 1 {
			return Limit{}, fmt.Errorf("%q: burst %q is not a whole number of at least 1", spec, fields[2])
		}
		l.Burst = burst
	}
	if err := l.Validate(); err != nil {
		return Limit{}, fmt.Errorf("%q: %w", spec, err)
	}
	return l, nil
}

func parsePeriod(text string) (time.Duration, error) {
	if text == "" {
		return 0, errors.New("the period is missing (such as 1s, 1m, 1h)")
	}
	if text[0] < '0' || text[0] > '9' {
		text = "1" + text
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("period %q is not a duration (such as 1s, 1m, 1h)", text)
	}
	if d <= 0 || d > 24*time.Hour*366 {
		return 0, fmt.Errorf("period %q must be positive and at most a year", text)
	}
	return d, nil
}

func formatPeriod(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return strconv.FormatInt(int64(math.Round(float64(d)/float64(time.Millisecond))), 10) + "ms"
	}
}
