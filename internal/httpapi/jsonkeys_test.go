package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// TestJSONMembersAreExact: encoding/json matches a member to a field in any
// case ("HOLD_ID", even "seat_idſ" with U+017F, which folds to s) and keeps
// the last of a member sent twice; the contract names each field exactly and
// once. decodeJSONBytes refuses both, in every object of a body, naming the
// member by its path; bodies the contract allows still decode.
func TestJSONMembersAreExact(t *testing.T) {
	const hold = `"hold_id":"0193a000-0000-7000-8000-000000000000"`
	tests := []struct {
		name string
		body string
		into func() any
		says string // "" when the body decodes
	}{
		{"an order", `{` + hold + `,"payment_token":"tok_visa"}`, func() any { return &orderRequest{} }, ""},
		{"an escaped name is the same name", `{"hold\u005fid":"x","payment_token":"tok_visa"}`, func() any { return &orderRequest{} }, ""},
		{"upper case", `{"HOLD_ID":"x","payment_token":"tok_visa"}`, func() any { return &orderRequest{} },
			`unknown field "HOLD_ID": field names are case-sensitive (did you mean "hold_id"?)`},
		{"one letter's case", `{"Email":"a@example.com","password":"correct horse","name":"A"}`, func() any { return &accountRequest{} },
			`unknown field "Email"`},
		{"a Unicode fold", `{"event_id":"x","seat_idſ":["y"]}`, func() any { return &holdRequest{} }, `unknown field "seat_idſ"`},
		{"twice", `{` + hold + `,` + hold + `,"payment_token":"tok_visa"}`, func() any { return &orderRequest{} },
			`field "hold_id" appears more than once`},
		{"twice, the second in another case", `{"email":"a@example.com","EMAIL":"b@example.com","password":"correct horse"}`,
			func() any { return &loginRequest{} }, `unknown field "EMAIL"`},
		{"twice, escaped", `{"label":"a","l\u0061bel":"b"}`, func() any { return &scannerKeyRequest{} }, `field "label" appears more than once`},
		{"an event", `{"name":"N","venue":"V","starts_at":"2099-01-01T20:00:00Z","sections":[{"name":"A","rows":1,"seats_per_row":1,"price_cents":1}],"waiting_room":{"admit_per_second":5}}`,
			func() any { return &eventRequest{} }, ""},
		{"in a section", `{"name":"N","sections":[{"name":"A"},{"NAME":"B"}]}`, func() any { return &eventRequest{} },
			`unknown field "sections[1].NAME"`},
		{"twice in a section", `{"sections":[{"rows":1,"rows":2}]}`, func() any { return &eventRequest{} },
			`field "sections[0].rows" appears more than once`},
		{"twice in the waiting room", `{"waiting_room":{"admit_per_second":1,"admit_per_second":2}}`, func() any { return &eventRequest{} },
			`field "waiting_room.admit_per_second" appears more than once`},
		{"an upload", `{"scans":[{"device_scan_id":"d1","code":"c","scanned_at":"2099-01-01T20:00:00Z","offline":true}]}`,
			func() any { return &uploadRequest{} }, ""},
		{"in an upload's scan", `{"scans":[{"device_scan_id":"d1","Code":"c"}]}`, func() any { return &uploadRequest{} },
			`unknown field "scans[0].Code"`},
		{"a limit change", `{"mode":"shadow","rate":10,"period_ms":60000,"burst":10}`, func() any { return &limitChangeRequest{} }, ""},
		{"twice in a limit change", `{"mode":"shadow","mode":"off"}`, func() any { return &limitChangeRequest{} },
			`field "mode" appears more than once`},
	}
	for _, tt := range tests {
		err := decodeJSONBytes([]byte(tt.body), tt.into())
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%s: %v, want it decoded", tt.name, err)
		case tt.says != "" && (err == nil || !errors.Is(err, errkind.Invalid) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%s: %v, want an Invalid error saying %s", tt.name, err, tt.says)
		}
		if p, ok := problemFor(err); err != nil && (!ok || p.Status != 400) {
			t.Errorf("%s: %v is not a 400", tt.name, err)
		}
	}
}
