package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// watcher reads one live seat-map stream over a connection of its own (one
// goroutine, no transport: a thousand of them stay light).
type watcher struct {
	conn net.Conn
	r    *bufio.Reader
}

func watch(t *testing.T, ts *testServer, eventID string) *watcher {
	t.Helper()
	return watchAt(t, ts.http.Listener.Addr().String(), eventID)
}

// watchAt is watch of the server listening on addr.
func watchAt(t *testing.T, addr, eventID string) *watcher {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /v1/events/%s/seats/stream HTTP/1.1\r\nHost: stagedoor\r\nAccept: text/event-stream\r\n\r\n", eventID)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &watcher{conn: conn, r: bufio.NewReader(resp.Body)}
}

// next reads the stream's next event (keep-alive comments skipped).
func (w *watcher) next(deadline time.Time) (name string, data []byte, err error) {
	_ = w.conn.SetReadDeadline(deadline)
	for {
		line, err := w.r.ReadString('\n')
		if err != nil {
			return "", nil, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = []byte(strings.TrimPrefix(line, "data: "))
		case line == "" && name != "":
			return name, data, nil
		}
	}
}

// TestThousandWatchersCostOneQueryASecond: 1,000 browsers watch one event's
// live seat map. Each starts with the whole map, and each sees a hold another
// buyer places (within 5 s here, where the whole suite shares two cores with
// the race detector; the browser test holds a page to 2 s); meanwhile the
// instance reads the event's seats from PostgreSQL once a second, not once per
// watcher.
func TestThousandWatchersCostOneQueryASecond(t *testing.T) {
	t.Parallel()
	const watchers = 1000
	ts := newTestServer(t, nil, nil, nil)
	org, buyer := newAccount(t, ts, auth.Organizer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(10, 10))

	ws := make([]*watcher, watchers)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() {
			w := watch(t, ts, event)
			name, data, err := w.next(time.Now().Add(10 * time.Second))
			if err != nil || name != "snapshot" {
				t.Errorf("watcher %d's first event: %q, %v", i, name, err)
				return
			}
			if m := as[apiclient.SeatMap](t, answer{raw: data, Response: &http.Response{StatusCode: 200}}); len(m.Seats) != 100 || m.EventId.String() != event {
				t.Errorf("watcher %d's snapshot has %d seats", i, len(m.Seats))
			}
			ws[i] = w
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	queries, start := ts.Events.SeatMapQueries(), time.Now()
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[42]), buyer.bearer()...); a.StatusCode != 201 {
		t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
	}
	for i, w := range ws {
		wg.Go(func() {
			for {
				name, data, err := w.next(start.Add(5 * time.Second))
				if err != nil {
					t.Errorf("watcher %d did not see the hold within 5 s: %v", i, err)
					return
				}
				var changes struct {
					Seats []struct{ ID, Status string } `json:"seats"`
				}
				if name == "changes" && json.Unmarshal(data, &changes) == nil {
					for _, s := range changes.Seats {
						if s.ID == seats[42] && s.Status == "held" {
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(time.Until(start.Add(5 * time.Second)))
	elapsed := time.Since(start).Seconds()
	got := ts.Events.SeatMapQueries() - queries
	t.Logf("%d watchers, %.1f s: %d seat-map queries", watchers, elapsed, got)
	if float64(got) > elapsed+1 {
		t.Errorf("%d watchers cost %d seat-map queries in %.1f s; want at most one a second", watchers, got, elapsed)
	}
	if v := metricValue(t, ts, "stagedoor_seat_stream_watchers"); v != fmt.Sprint(watchers) {
		t.Errorf("stagedoor_seat_stream_watchers = %s, want %d", v, watchers)
	}
}

// TestStreamsAreBoundedApart: a stream is not a request in flight, so watchers
// never shed the API; STAGEDOOR_MAX_STREAMS bounds them instead, the next one
// refused at once.
func TestStreamsAreBoundedApart(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, map[string]string{"STAGEDOOR_MAX_IN_FLIGHT": "2", "STAGEDOOR_MAX_STREAMS": "3"}, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	event, _ := newEvent(t, ts, org, eventBody(1, 2))
	for range 3 {
		watch(t, ts, event)
	}
	if a := ts.request(t, "GET", "/v1/events/"+event+"/seats/stream", ""); a.StatusCode != 503 || !a.problem(t).is("service-overloaded") {
		t.Errorf("a fourth stream of 3 = %d %s, want 503 service-overloaded", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "GET", "/v1/events/"+event, ""); a.StatusCode != 200 {
		t.Errorf("a read while 3 streams run with 2 in flight at most = %d, want 200", a.StatusCode)
	}
	if a := ts.request(t, "GET", "/v1/events/00000000-0000-0000-0000-000000000000/seats/stream", ""); a.StatusCode != 404 {
		t.Errorf("the stream of no event = %d, want 404", a.StatusCode)
	}
}
