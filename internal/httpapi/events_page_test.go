package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestEventListIsPaged reproduces half the eighth finding: GET /v1/events
// answered every event ever made. Now it answers pages of at most 100 events
// yet to start, soonest first, and a client walks them with next_after.
func TestEventListIsPaged(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	var want []string
	for i := range 5 {
		starts := time.Now().Add(time.Duration(5-i) * 24 * time.Hour) // created latest-first
		id, _ := newEvent(t, ts, org, fmt.Sprintf(`{"name":"Night %d","venue":"Hall","starts_at":%q,
			"sections":[{"name":"Floor","rows":1,"seats_per_row":1,"price_cents":100}]}`, i, starts.UTC().Format(time.RFC3339)))
		want = append([]string{id}, want...)
	}
	past, _ := newEvent(t, ts, org, eventBody(1, 1))
	if _, err := ts.DB.Exec(context.Background(),
		`UPDATE events SET starts_at = now() - interval '1 day', on_sale_at = now() - interval '2 days' WHERE id = $1`, past); err != nil {
		t.Fatal(err)
	}

	walk := func(query string) (got []string, pages int) {
		next := ""
		for {
			path := "/v1/events?" + query
			if next != "" {
				path += "&after=" + url.QueryEscape(next)
			}
			a := ts.request(t, "GET", path, "")
			page := as[apiclient.EventPage](t, a)
			if a.StatusCode != 200 || len(page.Events) > 2 {
				t.Fatalf("GET %s = %d %s, want at most 2 events", path, a.StatusCode, a.raw)
			}
			for _, e := range page.Events {
				got = append(got, e.Id.String())
			}
			if pages++; page.NextAfter == nil || pages > 10 {
				return got, pages
			}
			next = *page.NextAfter
		}
	}
	got, pages := walk("limit=2")
	if strings.Join(got, " ") != strings.Join(want, " ") || pages != 3 {
		t.Errorf("walked %v in %d pages, want the 5 upcoming events soonest first %v in 3", got, pages, want)
	}
	got, _ = walk("limit=2&include_past=true")
	if len(got) != 6 || got[0] != past {
		t.Errorf("with include_past: %v, want the past event first, then the 5 upcoming", got)
	}
	if list := as[apiclient.EventPage](t, ts.request(t, "GET", "/v1/events", "")); len(list.Events) != 5 || list.NextAfter != nil {
		t.Errorf("the default page = %d events, next %v; want all 5 upcoming and no next page", len(list.Events), list.NextAfter)
	}

	for _, query := range []string{"limit=0", "limit=101", "limit=x", "after=bogus", "after=" + url.QueryEscape("\x00"),
		"include_past=maybe", "after=" + strings.Repeat("A", 5000)} {
		a := ts.request(t, "GET", "/v1/events?"+query, "")
		if a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
			t.Errorf("GET /v1/events?%.40s = %d %s, want 400", query, a.StatusCode, a.raw)
		}
	}
}
