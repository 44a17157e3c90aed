package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

// TestTheOnSaleIsOnTheMetricsPage: once buyers poll an event's room on an
// instance (with their queue tokens: no Redis call of their own), its
// metrics listener shows the room's waiting buyers, its admissions and the
// last buyer's wait, and the event's seats sold, held and left.
func TestTheOnSaleIsOnTheMetricsPage(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyers := []testAccount{newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)}
	// On sale an hour from now: nobody is admitted yet, all three wait.
	event, _ := newEvent(t, ts, org, roomEventBody(1, 4, 1, time.Now().Add(time.Hour)))
	var token string
	for _, b := range buyers {
		a := ts.request(t, "POST", queuePath(event), "", b.bearer()...)
		q := as[queueJSON](t, a)
		if a.StatusCode != 200 || q.QueueToken == "" {
			t.Fatalf("joining = %d %s", a.StatusCode, a.raw)
		}
		token = q.QueueToken
	}
	// The figures are the room's progress as this instance last read it for
	// a poll, at most ten times a second: the last buyer keeps polling.
	poll := func() {
		if a := ts.request(t, "GET", queuePath(event), "", append(buyers[2].bearer(), "Queue-Token", token)...); a.StatusCode != 200 {
			t.Fatalf("polling = %d %s", a.StatusCode, a.raw)
		}
	}
	want := []string{
		fmt.Sprintf(`stagedoor_waitroom_waiting{event_id=%q} 3`, event),
		fmt.Sprintf(`stagedoor_waitroom_admitted_total{event_id=%q} 0`, event),
		fmt.Sprintf(`stagedoor_waitroom_wait_seconds{event_id=%q} 3`, event),
		fmt.Sprintf(`stagedoor_event_seats{event_id=%q,state="available"} 4`, event),
		fmt.Sprintf(`stagedoor_event_seats{event_id=%q,state="sold"} 0`, event),
	}
	testenv.EventuallyNil(t, 5*time.Second, func() error {
		poll()
		resp, err := http.Get(ts.metrics.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var missing []string
		for _, w := range want {
			if !strings.Contains(string(raw), w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		var seen []string
		for line := range strings.Lines(string(raw)) {
			if strings.Contains(line, "waitroom_") || strings.Contains(line, "event_seats") {
				seen = append(seen, strings.TrimSpace(line))
			}
		}
		return fmt.Errorf("the metrics page lacks %q; it shows %q", missing, seen)
	}, "the sale's figures on the metrics page")
}
