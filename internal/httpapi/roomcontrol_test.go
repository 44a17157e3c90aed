package httpapi_test

import (
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/testenv"
)

type waitingRoomStateJSON struct {
	EventID         string     `json:"event_id"`
	AdmitPerSecond  int        `json:"admit_per_second"`
	Paused          bool       `json:"paused"`
	ChangedAt       *time.Time `json:"changed_at"`
	Queued          int        `json:"queued"`
	Waiting         int        `json:"waiting"`
	AdmittedThrough int        `json:"admitted_through"`
}

func waitingRoomPath(who, eventID string) string {
	return "/v1/" + who + "/events/" + eventID + "/waiting-room"
}

// TestOperatorsPauseAndChangeALiveRoomOnEveryInstance: the organizer pauses
// her event's live room on one instance; a buyer polling the other with her
// queue token (15 buyers ahead of her at 1 a second, so that she still waits
// whatever the test's pace) is told she waits, paused, with no estimate and
// a place that does not move, within 2 s,
// while a buyer admitted before the pause still holds there. The admin
// resumes it at 50 a second on the other instance: the waiting buyer is
// admitted, and both instances show the new rate. Nobody else changes the
// room, and bad changes are 400s that change nothing.
func TestOperatorsPauseAndChangeALiveRoomOnEveryInstance(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	in := instance{db: testenv.Postgres(t), rdb: rdb, redisPrefix: prefix, env: map[string]string{"STAGEDOOR_ADMIN_TOKEN": adminToken}}
	one, two := startInstance(t, in), startInstance(t, in)
	org, other := newAccount(t, one, auth.Organizer), newAccount(t, one, auth.Organizer)
	ada, bea := newAccount(t, one, auth.Buyer), newAccount(t, one, auth.Buyer)
	event, seats := newEvent(t, one, org, roomEventBody(1, 4, 1, time.Now().Add(-time.Minute)))
	plain, _ := newEvent(t, one, org, eventBody(1, 4, time.Now().Add(-time.Minute)))
	admin := []string{"Authorization", "Bearer " + adminToken}

	// A queue in front of bea: at 1 a second she waits about ahead seconds,
	// however long this test's later steps take on a loaded machine (a room
	// admits on Redis's clock, which a test cannot hold still). The buyers are
	// signed up first, so that only their joins stand between ada's and bea's:
	// a sign-up (bcrypt, raced) can outlast a second, and those behind a slow
	// one were admitted on the spot (seen in CI).
	const ahead = 15
	queue := make([]testAccount, ahead)
	for i := range queue {
		queue[i] = newAccount(t, one, auth.Buyer)
	}
	if q := as[queueJSON](t, one.request(t, "POST", queuePath(event), "", ada.bearer()...)); q.Status != "admitted" {
		t.Fatalf("the first buyer in a quiet room: %+v; want admitted", q)
	}
	for _, b := range queue {
		if a := one.request(t, "POST", queuePath(event), "", b.bearer()...); a.StatusCode != 200 {
			t.Fatalf("a buyer's join = %d %s", a.StatusCode, a.raw)
		}
	}
	q := as[queueJSON](t, one.request(t, "POST", queuePath(event), "", bea.bearer()...))
	if q.Status != "waiting" || q.EstimatedWaitSeconds == nil || q.Paused {
		t.Fatalf("the last buyer at 1 a second: %+v; want waiting with an estimate", q)
	}

	for _, bad := range []struct{ who, body string }{
		{"{}", `{}`}, {"a rate of 0", `{"admit_per_second":0}`}, {"a rate of 100001", `{"admit_per_second":100001}`},
		{"paused as a string", `{"paused":"yes"}`}, {"an unknown field", `{"pause":true}`}, {"no JSON", `pause`},
	} {
		if a := one.request(t, "PATCH", waitingRoomPath("organizer", event), bad.body, org.bearer()...); a.StatusCode != 400 || !a.problem(t).is("invalid-request") {
			t.Errorf("a change with %s = %d %s; want 400 invalid-request", bad.who, a.StatusCode, a.raw)
		}
	}
	for _, refused := range []struct {
		who    string
		path   string
		status int
		as     []string
	}{
		{"another organizer", waitingRoomPath("organizer", event), 404, other.bearer()},
		{"a buyer", waitingRoomPath("organizer", event), 403, ada.bearer()},
		{"nobody", waitingRoomPath("organizer", event), 401, nil},
		{"the organizer, of an event without a room", waitingRoomPath("organizer", plain), 404, org.bearer()},
		{"an organizer, on the admin route", waitingRoomPath("admin", event), 401, org.bearer()},
	} {
		if a := one.request(t, "PATCH", refused.path, `{"paused":true}`, refused.as...); a.StatusCode != refused.status {
			t.Errorf("a pause by %s = %d %s; want %d", refused.who, a.StatusCode, a.raw, refused.status)
		}
	}
	if st := as[waitingRoomStateJSON](t, two.request(t, "GET", waitingRoomPath("organizer", event), "", org.bearer()...)); st.Paused || st.AdmitPerSecond != 1 || st.ChangedAt != nil || st.Queued != ahead+2 || st.Waiting < 1 {
		t.Fatalf("the room after refused changes: %+v; want unchanged, at 1 a second, %d queued, bea waiting", st, ahead+2)
	}

	a := one.request(t, "PATCH", waitingRoomPath("organizer", event), `{"paused":true}`, org.bearer()...)
	if st := as[waitingRoomStateJSON](t, a); a.StatusCode != 200 || !st.Paused || st.AdmitPerSecond != 1 || st.ChangedAt == nil || st.EventID != event {
		t.Fatalf("the pause = %d %s", a.StatusCode, a.raw)
	}
	token := q.QueueToken
	eventually(t, "the other instance tells the waiting buyer the room is paused", func() bool {
		q = as[queueJSON](t, two.request(t, "GET", queuePath(event), "", append(bea.bearer(), "Queue-Token", token)...))
		token = q.QueueToken
		return q.Status == "waiting" && q.Paused
	})
	if q.EstimatedWaitSeconds != nil || q.Position == nil || *q.Position < 1 || *q.Position > ahead+1 {
		t.Errorf("a paused buyer's place: %+v; want a position behind those still waiting and no estimate", q)
	}
	paused := *q.Position
	if q = as[queueJSON](t, one.request(t, "GET", queuePath(event), "", append(bea.bearer(), "Queue-Token", token)...)); q.Position == nil || *q.Position != paused {
		t.Errorf("a paused buyer's place a moment later: %+v; want %d still: nobody is admitted while paused", q, paused)
	}
	token = q.QueueToken
	if a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[0]), ada.bearer()...); a.StatusCode != 201 {
		t.Errorf("a hold by a buyer admitted before the pause = %d %s; want 201", a.StatusCode, a.raw)
	}
	if a := two.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), bea.bearer()...); a.StatusCode != 403 {
		t.Errorf("a hold by the waiting buyer while paused = %d %s; want 403", a.StatusCode, a.raw)
	}

	a = two.request(t, "PATCH", waitingRoomPath("admin", event), `{"admit_per_second":50,"paused":false}`, admin...)
	if st := as[waitingRoomStateJSON](t, a); a.StatusCode != 200 || st.Paused || st.AdmitPerSecond != 50 {
		t.Fatalf("the admin's resume at 50 a second = %d %s", a.StatusCode, a.raw)
	}
	eventually(t, "the waiting buyer is admitted once resumed at 50 a second", func() bool {
		q = as[queueJSON](t, one.request(t, "GET", queuePath(event), "", append(bea.bearer(), "Queue-Token", token)...))
		token = q.QueueToken
		return q.Status == "admitted"
	})
	for _, ts := range []*testServer{one, two} {
		if st := as[waitingRoomStateJSON](t, ts.request(t, "GET", waitingRoomPath("admin", event), "", admin...)); st.Paused || st.AdmitPerSecond != 50 || st.Waiting != 0 || st.AdmittedThrough != ahead+2 {
			t.Errorf("the room as an instance reads it after the resume: %+v", st)
		}
	}
	if e := as[map[string]any](t, one.request(t, "GET", "/v1/events/"+event, "")); e["waiting_room"].(map[string]any)["admit_per_second"] != 1.0 {
		t.Errorf("the event's waiting_room = %v; want the rate its room opened at, 1", e["waiting_room"])
	}
}
