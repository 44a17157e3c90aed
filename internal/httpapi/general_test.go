package httpapi_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stagedoor/stagedoor/internal/apiclient"
	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// gaEventBody is eventBody with a second section, Lawn, of general admission:
// capacity places at 3000 cents.
func gaEventBody(rows, perRow, capacity int) string {
	return strings.Replace(eventBody(rows, perRow), `"price_cents":4500}]`,
		fmt.Sprintf(`"price_cents":4500},{"name":"Lawn","general_admission":true,"capacity":%d,"price_cents":3000}]`, capacity), 1)
}

// generalBody is a hold of the seats and quantity places of section.
func generalBody(eventID, section string, quantity int, seats ...string) string {
	return strings.Replace(holdBody(eventID, seats...), `}`,
		fmt.Sprintf(`,"general":[{"section_id":%q,"quantity":%d}]}`, section, quantity), 1)
}

// TestGeneralAdmissionSections: an event takes a section of general admission,
// answers its sections with their ids, kinds, capacities and what is
// available, and refuses a section of the wrong shape with a 400 that says
// what is wrong; the seat map lists seats alone.
func TestGeneralAdmissionSections(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil, nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	a := ts.request(t, "POST", "/v1/events", gaEventBody(1, 2, 5), org.bearer()...)
	ev := as[apiclient.Event](t, a)
	sections := deref(ev.Sections)
	if a.StatusCode != 201 || len(sections) != 2 || ev.SeatsTotal != 7 {
		t.Fatalf("create = %d %s", a.StatusCode, a.raw)
	}
	lawn, floor := sections[1], sections[0]
	if !lawn.GeneralAdmission || lawn.Capacity != 5 || lawn.Available != 5 || lawn.Rows != nil || lawn.Id == uuid.Nil ||
		floor.GeneralAdmission || floor.Capacity != 2 || deref(floor.Rows) != 1 {
		t.Errorf("sections = %s", a.raw)
	}
	if got := deref(as[apiclient.Event](t, ts.request(t, "GET", "/v1/events/"+ev.Id.String(), "")).Sections); len(got) != 2 || !reflect.DeepEqual(got[1], lawn) {
		t.Errorf("GET sections = %+v, want %+v second", got, lawn)
	}
	if m := ts.request(t, "GET", "/v1/events/"+ev.Id.String()+"/seats", ""); !strings.Contains(string(m.raw), `"row":"A"`) ||
		strings.Count(string(m.raw), `"id"`) != 2 {
		t.Errorf("the seat map lists places: %s", m.raw)
	}
	for name, tt := range map[string]struct{ section, says string }{
		"places and rows":      {`{"name":"Lawn","general_admission":true,"capacity":5,"rows":1,"price_cents":1}`, "capacity, not rows"},
		"no capacity":          {`{"name":"Lawn","general_admission":true,"price_cents":1}`, "capacity must be between 1 and 10000"},
		"a capacity too large": {`{"name":"Lawn","general_admission":true,"capacity":10001,"price_cents":1}`, "between 1 and 10000"},
		"seats and a capacity": {`{"name":"Lawn","rows":1,"seats_per_row":2,"capacity":2,"price_cents":1}`, "is seated"},
		"too many in all":      {`{"name":"Lawn","general_admission":true,"capacity":9999,"price_cents":1}`, "at most 10000"},
	} {
		body := strings.Replace(eventBody(1, 2), `"price_cents":4500}]`, `"price_cents":4500},`+tt.section+`]`, 1)
		if a := ts.request(t, "POST", "/v1/events", body, org.bearer()...); a.StatusCode != 400 || !strings.Contains(a.problem(t).Detail, tt.says) {
			t.Errorf("%s: = %d %s, want 400 saying %q", name, a.StatusCode, a.raw, tt.says)
		}
	}
}

// TestHoldsOfPlaces: a hold of places (with a seat) answers what it holds by
// section; a bad request for places is a 400 saying so; too few places left is
// 409 sold-out naming the section and how many are left; and the event's
// sections count the places held within a snapshot's age.
func TestHoldsOfPlaces(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, limitEnv("STAGEDOOR_LIMIT_HOLD_BUYER", "1000/1s"), nil, nil)
	org := newAccount(t, ts, auth.Organizer)
	buyer, other := newAccount(t, ts, auth.Buyer), newAccount(t, ts, auth.Buyer)
	a := ts.request(t, "POST", "/v1/events", gaEventBody(1, 2, 3), org.bearer()...)
	ev := as[apiclient.Event](t, a)
	floor, lawn := (*ev.Sections)[0].Id.String(), (*ev.Sections)[1].Id.String()
	_, seats := newEvent(t, ts, org, eventBody(1, 1)) // another event's seat

	for name, tt := range map[string]struct{ body, says string }{
		"an unknown section":   {generalBody(ev.Id.String(), ids.New(), 1), "names no section"},
		"a seated section":     {generalBody(ev.Id.String(), floor, 1), "a seated section"},
		"no place":             {generalBody(ev.Id.String(), lawn, 0), "quantity must be between 1 and 10"},
		"a section twice":      {strings.Replace(generalBody(ev.Id.String(), lawn, 1), `]}`, fmt.Sprintf(`,{"section_id":%q,"quantity":1}]}`, lawn), 1), "more than once"},
		"eleven":               {generalBody(ev.Id.String(), lawn, 10, seats[0]), "1 to 10 seats and places"},
		"nothing at all":       {fmt.Sprintf(`{"event_id":%q}`, ev.Id.String()), "1 to 10 seats"},
		"a quantity as text":   {strings.Replace(generalBody(ev.Id.String(), lawn, 1), `"quantity":1`, `"quantity":"1"`, 1), "quantity"},
		"an unknown field":     {strings.Replace(generalBody(ev.Id.String(), lawn, 1), `"quantity":1`, `"quantity":1,"row":"A"`, 1), `unknown field "row"`},
		"another event's seat": {generalBody(ev.Id.String(), lawn, 1, seats[0]), "are not seats of event"},
	} {
		if a := ts.request(t, "POST", "/v1/holds", tt.body, buyer.bearer()...); a.StatusCode != 400 || !strings.Contains(a.problem(t).Detail, tt.says) {
			t.Errorf("%s: = %d %s, want 400 saying %q", name, a.StatusCode, a.raw, tt.says)
		}
	}

	a = ts.request(t, "POST", "/v1/holds", generalBody(ev.Id.String(), lawn, 2), buyer.bearer()...)
	h := as[holdJSON](t, a)
	if a.StatusCode != 201 || len(h.SeatIDs) != 2 || len(h.General) != 1 || h.General[0].SectionID != lawn ||
		h.General[0].Section != "Lawn" || h.General[0].Quantity != 2 || h.TotalCents != 6000 {
		t.Fatalf("hold of 2 places = %d %s", a.StatusCode, a.raw)
	}
	if got := as[holdJSON](t, ts.request(t, "GET", "/v1/holds/"+h.ID, "", buyer.bearer()...)); len(got.General) != 1 || got.General[0] != h.General[0] {
		t.Errorf("GET hold = %+v", got)
	}
	a = ts.request(t, "POST", "/v1/holds", generalBody(ev.Id.String(), lawn, 2), other.bearer()...)
	p := a.problem(t)
	if a.StatusCode != 409 || !p.is("sold-out") || len(p.SoldOutSections) != 1 || p.SoldOutSections[0].SectionID != lawn ||
		p.SoldOutSections[0].Section != "Lawn" || p.SoldOutSections[0].Asked != 2 || p.SoldOutSections[0].Available != 1 ||
		p.Detail != "Lawn has 1 place left, and 2 were asked for; nothing was held" {
		t.Errorf("a hold of 2 with 1 left = %d %s, want 409 sold-out, 1 left", a.StatusCode, a.raw)
	}
	waitFor(t, 5*time.Second, "the event's sections to count the places held", func() bool {
		got := as[apiclient.Event](t, ts.request(t, "GET", "/v1/events/"+ev.Id.String(), ""))
		return len(deref(got.Sections)) == 2 && (*got.Sections)[1].Available == 1 && got.SeatsAvailable == 3
	})
	if page := ts.request(t, "GET", "/problems/sold-out", ""); page.StatusCode != 200 {
		t.Errorf("GET /problems/sold-out = %d", page.StatusCode)
	}
}

// TestAPlaceIsBoughtAndAdmittedOnce: a hold of places checked out through
// Payrail gives one ticket a place, saying its section and that it is of
// general admission, in the order and the buyer's tickets; the door admits
// each once, saying so.
func TestAPlaceIsBoughtAndAdmittedOnce(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	a := v.inProcess(t, "POST", "/v1/events", gaEventBody(1, 1, 10), v.org.bearer()...)
	ev := as[apiclient.Event](t, a)
	a = v.inProcess(t, "POST", "/v1/holds", generalBody(ev.Id.String(), (*ev.Sections)[1].Id.String(), 2), v.buyer.bearer()...)
	if a.StatusCode != 201 {
		t.Fatalf("hold = %d %s", a.StatusCode, a.raw)
	}
	a = v.inProcess(t, "POST", "/v1/orders", orderBody(as[holdJSON](t, a).ID, "tok_visa"), v.buyer.bearer()...)
	order := as[apiclient.Order](t, a)
	if a.StatusCode != 201 || order.TotalCents != 6000 || len(order.Tickets) != 2 {
		t.Fatalf("checkout = %d %s", a.StatusCode, a.raw)
	}
	for _, tk := range order.Tickets {
		if tk.Section != "Lawn" || !tk.GeneralAdmission {
			t.Errorf("a ticket of the order = %+v, want Lawn, general admission", tk)
		}
	}
	codes := map[string]bool{*order.Tickets[0].Code: true, *order.Tickets[1].Code: true}
	list := as[ticketList](t, v.inProcess(t, "GET", "/v1/tickets", "", v.buyer.bearer()...)).Tickets
	if len(list) != 2 {
		t.Errorf("the buyer has %d tickets, want 2", len(list))
	}
	for _, tk := range list {
		if tk.Section != "Lawn" || !tk.GeneralAdmission || !codes[*tk.Code] {
			t.Errorf("a ticket of the buyer's = %+v, want one of the order's, Lawn, general admission", tk)
		}
	}
	door := v.key(t, ev.Id.String())
	for _, tk := range order.Tickets {
		a := v.scanTB(t, door, *tk.Code)
		adm := as[admissionJSON](t, a)
		if a.StatusCode != 200 || adm.TicketID != tk.Id.String() || adm.Seat.Section != "Lawn" || !adm.Seat.GeneralAdmission || adm.Seat.Row != "" {
			t.Errorf("the first scan of a place = %d %s", a.StatusCode, a.raw)
		}
		wantRejected(t, "the second scan of a place", v.scanTB(t, door, *tk.Code), 409, "already_scanned")
	}
}
