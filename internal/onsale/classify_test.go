package onsale

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKindOfCountsRefusalsByType: every 429 is a refusal whatever its type
// (the edge's, a limit's, a concurrency limit's), a 503 is one when the
// contract documents its type as a 503, and any other 5xx is an error.
func TestKindOfCountsRefusalsByType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		slug   string
		want   int
	}{
		{0, "", kindNoAnswer},
		{200, "", kindOK},
		{201, "", kindOK},
		{403, "not-admitted", kindOK},
		{409, "seats-unavailable", kindOK},
		{429, "rate-limited", kindRefused},
		{429, "too-many-concurrent-requests", kindRefused},
		{429, "", kindRefused},                   // a 429 without a problem
		{429, "a-type-of-tomorrow", kindRefused}, // any 429
		{503, "service-overloaded", kindRefused},
		{503, "service-unavailable", kindRefused},
		{503, "payment-unavailable", kindRefused},
		{503, "", kindError},                   // a 503 without its problem: an edge's, say
		{503, "internal-error", kindError},     // documented, but not as a 503
		{503, "no-such-problem", kindError},    // not in the contract
		{500, "internal-error", kindError},     // documented, and an error
		{502, "", kindError},                   // an edge's
		{504, "", kindError},                   // an edge's
		{500, "service-overloaded", kindError}, // a documented 503 type with another status
	} {
		if got := kindOf(c.status, c.slug); got != c.want {
			t.Errorf("kindOf(%d, %q) = %d, want %d", c.status, c.slug, got, c.want)
		}
	}
	for _, slug := range []string{"rate-limited", "too-many-concurrent-requests", "service-overloaded"} {
		if documentedStatus[slug] == 0 {
			t.Errorf("the contract's catalogue has no %s: %v", slug, documentedStatus)
		}
	}
}

func TestRefusedByNamesWhatRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status                         int
		slug, limit, shedder, instance string
		want                           string
	}{
		{429, "rate-limited", "hold-buyer", "", "i1", "hold-buyer"},
		{429, "too-many-concurrent-requests", "buyer-concurrency", "", "i2", "buyer-concurrency"},
		{429, "rate-limited", "", "", "-", "edge"}, // HAProxy's: no X-Served-By
		{429, "", "", "", "-", "edge"},
		{429, "rate-limited", "", "", "i3", "rate-limited"}, // an instance's, naming no limit
		{503, "service-overloaded", "", "worker-utilization", "i1", "worker-utilization"},
		{503, "service-overloaded", "", "fleet-usage", "i1", "fleet-usage"},
		{503, "service-overloaded", "", "", "i1", "service-overloaded"}, // a server naming no bound
		{503, "service-overloaded", "", "checkout", "i1", "checkout"},
		{503, "service-overloaded", "", "in_flight", "i1", "in_flight"},
		{503, "service-overloaded", "", "waiting_room", "i1", "waiting_room"},
		{503, "payment-unavailable", "", "", "i2", "payment-unavailable"},
	} {
		if got := refusedBy(c.status, c.slug, c.limit, c.shedder, c.instance); got != c.want {
			t.Errorf("refusedBy(%d, %q, %q, %q, %q) = %q, want %q", c.status, c.slug, c.limit, c.shedder, c.instance, got, c.want)
		}
	}
}

func TestPolicyName(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		`"hold-buyer";q=10;w=60`:  "hold-buyer",
		` "queue-join" ;q=5;w=60`: "queue-join",
		`hold-organizer`:          "hold-organizer",
		``:                        "",
	} {
		if got := policyName(h); got != want {
			t.Errorf("policyName(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestRecorderCountsRefusalsApart: the live counters and the counts by what
// refused follow the classification.
func TestRecorderCountsRefusalsApart(t *testing.T) {
	t.Parallel()
	epoch := time.Now()
	rec := newRecorder(epoch)
	add := func(status int, instance, slug, limit, shedder string) {
		rec.add(0, routeHold, epoch, time.Millisecond, status, instance, slug, limit, shedder, "")
	}
	add(201, "i1", "", "", "")
	add(429, "-", "rate-limited", "", "")
	add(429, "i2", "rate-limited", "hold-buyer", "")
	add(503, "i3", "service-overloaded", "", "worker-utilization")
	add(503, "i3", "service-overloaded", "", "")
	add(500, "i1", "internal-error", "", "")
	add(502, "-", "", "", "")
	add(0, "-", "", "", "")
	if got := rec.refusals(); len(got) != 4 || got["edge"] != 1 || got["hold-buyer"] != 1 || got["worker-utilization"] != 1 || got["service-overloaded"] != 1 {
		t.Errorf("refusals = %v", got)
	}
	if rec.fivexx.Load() != 2 || rec.noAnswer.Load() != 1 || rec.total.Load() != 8 {
		t.Errorf("5xx %d, no answer %d, total %d; want 2, 1, 8", rec.fivexx.Load(), rec.noAnswer.Load(), rec.total.Load())
	}
	line := progressLine(Options{Seats: 100, Buyers: 10}, Sale{OnSaleAt: epoch}, rec, epoch.Add(3*time.Second), 12)
	for _, want := range []string{"T+3s", "refused edge=1 hold-buyer=1 service-overloaded=1 worker-utilization=1", "5xx 2", "no answer 1", "sold 0/100", "12 req/s"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}

// TestNamesPastTheLimit: a recorder that meets more than 65,535 distinct
// strings keeps the rest as one name instead of looping or wrapping.
func TestNamesPastTheLimit(t *testing.T) {
	t.Parallel()
	var n names
	n.id("")
	for i := range 1<<16 + 10 {
		n.id("name-" + strconv.Itoa(i))
	}
	last := n.id("one more")
	if n.list[last] != tooManyNames || len(n.list) != 1<<16 {
		t.Errorf("past the limit: %q, %d names", n.list[last], len(n.list))
	}
}
