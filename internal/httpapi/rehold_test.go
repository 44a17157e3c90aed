package httpapi_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// TestReleasedSeatsCoolForTheirBuyer: with STAGEDOOR_REHOLD_COOLDOWN at 60 s,
// a buyer who gives seats back may not hold any of them again for a minute:
// 409 rehold-cooldown naming exactly those seats, with Retry-After, and
// nothing held. Each such attempt spends a hold-buyer token, as every hold
// does, so hammering the cooldown ends in 429; the release spent none. Another
// buyer holds the seats at once.
func TestReleasedSeatsCoolForTheirBuyer(t *testing.T) {
	t.Parallel()
	// 10/1h: no token comes back while the test runs.
	ts := newTestServer(t, limitEnv("STAGEDOOR_REHOLD_COOLDOWN", "60s", "STAGEDOOR_LIMIT_HOLD_BUYER", "10/1h"), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	ada, bob := newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	event, seats := newEvent(t, ts, org, eventBody(1, 4))

	a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1]), ada.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("Ada's hold = %d %s", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "DELETE", "/v1/holds/"+as[holdJSON](t, a).ID, "", ada.bearer()...); a.StatusCode != 204 {
		t.Fatalf("Ada's release = %d %s", a.StatusCode, a.raw)
	}
	a = ts.request(t, "POST", "/v1/holds", holdBody(event, seats[2], seats[1]), ada.bearer()...)
	p := a.problem(t)
	if a.StatusCode != 409 || !p.is("rehold-cooldown") || fmt.Sprint(p.CooldownSeatIDs) != fmt.Sprint([]string{seats[1]}) {
		t.Fatalf("Ada again on a seat she gave back = %d %s, want 409 rehold-cooldown naming %s", a.StatusCode, a.raw, seats[1])
	}
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 50 || s > 60 {
		t.Errorf("Retry-After = %q, want about 60", a.Header.Get("Retry-After"))
	}
	// One token for the hold, none for the release, one for the refused hold.
	if got := a.Header.Get("RateLimit"); !strings.HasPrefix(got, `"hold-buyer";r=8;`) {
		t.Errorf("RateLimit after a hold, a release and a refused hold = %q, want 8 tokens left", got)
	}
	if n := heldSeats(t, ts, event); n != 0 {
		t.Errorf("%d seats held after the refusal, want none", n)
	}
	for i := range 8 {
		if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...); a.StatusCode != 409 {
			t.Fatalf("attempt %d in the cooldown = %d %s, want 409", i+2, a.StatusCode, a.raw)
		}
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[1]), ada.bearer()...); a.StatusCode != 429 || a.problem(t).Limit != "hold-buyer" {
		t.Errorf("the tenth attempt in the cooldown = %d %s, want 429 from hold-buyer", a.StatusCode, a.raw)
	}
	if a := ts.request(t, "POST", "/v1/holds", holdBody(event, seats[0], seats[1]), bob.bearer()...); a.StatusCode != 201 {
		t.Errorf("Bob on the seats Ada gave back, at once = %d %s, want 201", a.StatusCode, a.raw)
	}
}
