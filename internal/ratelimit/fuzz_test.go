package ratelimit

import "testing"

// FuzzParseLimit: ParseLimit never panics, and what it accepts can be
// enforced (Validate passes, the bucket's figures are positive) and is written
// back by String as a spec that parses to the same limit. Its seed corpus is
// in testdata/fuzz/FuzzParseLimit and runs with every go test.
func FuzzParseLimit(f *testing.F) {
	for _, spec := range []string{"10/1m", "20/1s burst 50", "5/1h burst 5", "10/m", "1/1ms", "7/1s",
		"0/1s", "1/0s", "-1/1s", "1/1s burst", "1/1s bust 2", "9223372036854775807/1h", "1/8760h burst 2", "1/1.5ms"} {
		f.Add(spec)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		l, err := ParseLimit(spec)
		if err != nil {
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("ParseLimit(%q) accepted %+v, which Validate refuses: %v", spec, l, err)
		}
		if iv, tau := l.gcra(); iv < 1 || tau < iv || tau > maxTolerance+iv {
			t.Fatalf("ParseLimit(%q) = %+v: interval %d µs, tolerance %d µs", spec, l, iv, tau)
		}
		again, err := ParseLimit(l.String())
		if err != nil || again != l {
			t.Fatalf("ParseLimit(%q) = %+v, written %q, read back as %+v, %v", spec, l, l.String(), again, err)
		}
	})
}
