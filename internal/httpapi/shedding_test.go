package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/shed"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestCriticalTrafficSurvivesASheddableFlood: with a fleet capacity of 20
// requests a second, a flood of event lists (sheddable) at three times that is
// shed by fleet-usage, while every checkout and every scan (critical) that its
// own limits allow succeeds. (A small capacity, so that even a busy machine
// under the race detector offers the flood at its rate.)
func TestCriticalTrafficSurvivesASheddableFlood(t *testing.T) {
	t.Parallel()
	const capacity, flood, buyers = 20, 60, 20
	// A payment timeout far beyond Payrail's latency: a checkout that waits on
	// a busy machine is not what this test is about.
	s := newShop(t, 0, "STAGEDOOR_FLEET_CAPACITY", fmt.Sprint(capacity), "STAGEDOOR_LIMIT_SCANNER_KEY", "100/1s",
		"STAGEDOOR_PAYMENT_TIMEOUT", "20s", "STAGEDOOR_RECOVERY_AFTER", "1m")
	holds := make([]string, buyers)
	who := make([]testAccount, buyers)
	for i := range holds {
		who[i] = newAccount(t, s.testServer, auth.Buyer)
		holds[i] = s.hold(t, who[i], s.seats[i])
	}
	_, key := newScannerKey(t, s.testServer, s.org, s.event)
	// The fleet's rates are exchanged from now on: the set-up's holds above
	// (normal) would otherwise be above their share of so small a capacity.
	ctx, cancel := context.WithCancel(context.Background())
	var loop sync.WaitGroup
	loop.Go(func() { s.Fleet.Run(ctx) })
	t.Cleanup(func() { cancel(); loop.Wait() })

	// The flood: event lists at 3× the fleet's capacity, for as long as the
	// critical requests take. Each request is sent at its tick whatever the
	// answers' latency (an open load): on a busy machine, a client that
	// waits for each answer before the next offers less than the capacity,
	// and then nothing is to be shed.
	var offered, served, shedOK, other atomic.Int64
	began := time.Now()
	stopFlood := testenv.OpenLoad(t, flood, func() {
		offered.Add(1)
		a := s.request(t, "GET", "/v1/events", "")
		if a.StatusCode == 200 {
			served.Add(1)
			return
		}
		switch p := a.problem(t); {
		case a.StatusCode == 503 && p.is("service-overloaded") && p.Shedder == string(shed.FleetUsage) && p.Bound == string(shed.FleetUsage) && a.Header.Get("Retry-After") == "1":
			shedOK.Add(1)
		default:
			other.Add(1)
			t.Errorf("an event list = %d %s", a.StatusCode, a.raw)
		}
	})
	time.Sleep(1500 * time.Millisecond) // the fleet's rates known: the flood is being shed

	var critical, ok int
	var codes []string
	for i, h := range holds {
		critical++
		a := s.checkout(t, who[i], orderBody(h, "tok_visa"), fmt.Sprint("key-", i))
		if a.StatusCode == 201 {
			ok++
			codes = append(codes, *as[apiclient.Order](t, a).Tickets[0].Code)
		} else {
			t.Logf("checkout %d = %d %s", i, a.StatusCode, a.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, code := range codes {
		critical++
		a := s.request(t, "POST", "/v1/scans", fmt.Sprintf(`{"code":%q}`, code), "X-Api-Key", key)
		if a.StatusCode == 200 && as[admissionJSON](t, a).Result == "admitted" {
			ok++
		} else {
			t.Logf("scan = %d %s", a.StatusCode, a.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopFlood()

	elapsed := time.Since(began)
	t.Logf("flood: %d event lists offered in %s (%.0f/s), %d served, %d shed; critical: %d of %d succeeded",
		offered.Load(), elapsed.Round(time.Millisecond), float64(offered.Load())/elapsed.Seconds(), served.Load(), shedOK.Load(), ok, critical)
	if float64(ok) < 0.99*float64(critical) {
		t.Errorf("%d of %d checkouts and scans succeeded, want ≥ 99%%", ok, critical)
	}
	if shedOK.Load() == 0 || float64(served.Load()) > 0.7*float64(offered.Load()) {
		t.Errorf("of %d event lists offered at 3× the capacity, %d were served and %d shed; the flood was not shed",
			offered.Load(), served.Load(), shedOK.Load())
	}
	s.noViolations(t)
}

// TestAShedderIsSwitchedLikeALimit: the shedders are listed by the admin API
// with their kind and mode, and PUT sets a mode.
func TestAShedderIsSwitchedLikeALimit(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}, nil, nil)
	a := ts.request(t, "PUT", "/v1/admin/limits/worker-utilization", `{"mode":"off"}`, "Authorization", "Bearer "+adminToken)
	if a.StatusCode != 200 {
		t.Fatalf("PUT worker-utilization off = %d %s", a.StatusCode, a.raw)
	}
	if m := ts.Utilization.Mode(); m != "off" {
		t.Fatalf("worker-utilization is %q after the PUT, want off", m)
	}
	a = ts.request(t, "PUT", "/v1/admin/limits/worker-utilization", `{"mode":"enforce","rate":5}`, "Authorization", "Bearer "+adminToken)
	if a.StatusCode != 422 && a.StatusCode != 400 {
		t.Errorf("PUT a rate on a shedder = %d %s, want a 4xx", a.StatusCode, a.raw)
	}
	a = ts.request(t, "GET", "/v1/admin/limits", "", "Authorization", "Bearer "+adminToken)
	list := as[[]struct{ Name, Kind, Mode string }](t, a)
	got := map[string]string{}
	for _, l := range list {
		got[l.Name] = l.Kind + " " + l.Mode
	}
	want := map[string]string{"worker-utilization": "shedder off", "fleet-usage": "shedder off", // no fleet capacity set: off
		"buyer-concurrency": "concurrency enforce", "hold-buyer": "bucket enforce"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s is listed as %q, want %q", name, got[name], w)
		}
	}
}
