package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// The door's history: what an upload may and may not rewrite (issue 25).

// key makes a scanner key of the venue's organizer, bound to eventID ("" for
// none), and returns the key.
func (v *venue) key(t testing.TB, eventID string) string {
	t.Helper()
	_, key := newScannerKey(t, v.testServer, v.org, eventID)
	return key
}

// keysMadeAgo dates every scanner key of the database d ago, so that uploads
// may date scans in the recent past (an upload's dates are believed only
// after its key was made).
func (v *venue) keysMadeAgo(t testing.TB, d time.Duration) {
	t.Helper()
	if _, err := v.DB.Exec(context.Background(), `UPDATE scanner_keys SET created_at = now() - make_interval(secs => $1)`, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

// uploadAnswer uploads scans with key and returns the answer, whatever it is.
func (v *venue) uploadAnswer(t testing.TB, key string, scans ...string) answer {
	t.Helper()
	return v.request(t, "POST", "/v1/scans/batch", uploadBody(scans...), "X-Api-Key", key)
}

// admissions checks the audit's one rule: a scanned ticket has exactly one
// admitted row, at its scanned_at, and an unscanned one none.
func admissionsAreOne(t *testing.T, v *venue) {
	t.Helper()
	rows, err := v.DB.Query(context.Background(), `
		SELECT t.id::text, t.scanned_at IS NOT NULL, count(s.id), count(s.id) FILTER (WHERE s.scanned_at = t.scanned_at)
		FROM tickets t LEFT JOIN scans s ON s.ticket_id = t.id AND s.result = 'admitted'
		GROUP BY t.id, t.scanned_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var scanned bool
		var admitted, atScannedAt int
		if err := rows.Scan(&id, &scanned, &admitted, &atScannedAt); err != nil {
			t.Fatal(err)
		}
		if scanned && (admitted != 1 || atScannedAt != 1) || !scanned && admitted != 0 {
			t.Errorf("ticket %s (scanned %v) has %d admitted rows, %d at its scanned_at; want one at it when scanned, else none",
				id, scanned, admitted, atScannedAt)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func (v *venue) scannedAt(t testing.TB, ticketID string) *time.Time {
	t.Helper()
	var at *time.Time
	if err := v.DB.QueryRow(context.Background(), `SELECT scanned_at FROM tickets WHERE id = $1`, ticketID).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// forge changes one character of a signed code's signature.
func forge(code string) string {
	b := []byte(code)
	b[100] = map[bool]byte{true: 'A', false: 'B'}[b[100] != 'A']
	return string(b)
}

// TestRespelledCodesAreRefused: a code's last character has 4 unused bits, so
// 16 spellings decode to its bytes. The 15 that are not the code are refused
// online and in an upload of a scan the device only queued; the ticket stays
// unscanned, and its code as issued admits it.
func TestRespelledCodesAreRefused(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 1)
	key := v.key(t, v.event)
	v.keysMadeAgo(t, time.Hour)
	spellings := ticketsign.Respellings(tickets[0].code)
	if len(spellings) != 15 {
		t.Fatalf("%d respellings, want 15", len(spellings))
	}
	base := time.Now().Add(-30 * time.Minute)
	for i, r := range spellings {
		wantRejected(t, "a respelled code online", v.scanTB(t, key, r), 404, "invalid")
		got := v.upload(t, key, deviceScan(fmt.Sprintf("q-%d", i), r, base.Add(time.Duration(i)*time.Second), false))
		if got[0].Result != "invalid" || got[0].TicketID != nil {
			t.Errorf("respelling %d uploaded, queued = %+v, want invalid, no ticket", i, got[0])
		}
	}
	if at := v.scannedAt(t, tickets[0].id); at != nil {
		t.Fatalf("a respelling admitted the ticket at %v", at)
	}
	if a := v.scanTB(t, key, tickets[0].code); a.StatusCode != 200 {
		t.Errorf("the code as issued = %d %s, want admitted", a.StatusCode, a.raw)
	}
	admissionsAreOne(t, v)
}

// TestRespelledOfflineAdmissionIsTheTicketsAdmission: a device (an older door
// page, another app) admitted a respelling of a code offline: someone got in
// with that ticket. Its upload is settled by the ticket the signature names,
// so the code as issued, at another door, is already scanned (online) or a
// conflict (offline), never admitted again. A forged signature admits nothing.
func TestRespelledOfflineAdmissionIsTheTicketsAdmission(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 2)
	north, south, west := v.key(t, v.event), v.key(t, v.event), v.key(t, "")
	v.keysMadeAgo(t, time.Hour)
	at := time.Now().Add(-5 * time.Minute).Truncate(time.Millisecond)

	got := v.upload(t, north, deviceScan("n-1", ticketsign.Respellings(tickets[0].code)[7], at, true))
	if got[0].Result != "admitted" || got[0].TicketID == nil || *got[0].TicketID != tickets[0].id || !got[0].FirstScannedAt.Equal(at) {
		t.Fatalf("the respelled offline admission uploaded = %+v, want admitted, ticket %s at %v", got[0], tickets[0].id, at)
	}
	if p := wantRejected(t, "the code as issued at another door", v.scanTB(t, south, tickets[0].code), 409, "already_scanned"); !p.FirstScannedAt.Equal(at) {
		t.Errorf("already scanned at %v, want the offline admission's %v", p.FirstScannedAt, at)
	}
	if got := v.upload(t, west, deviceScan("w-1", tickets[0].code, at.Add(time.Minute), true)); got[0].Result != "conflict" {
		t.Errorf("the code as issued, admitted offline later at a third door = %+v, want conflict", got[0])
	}

	if got := v.upload(t, north, deviceScan("n-2", forge(tickets[1].code), at.Add(2*time.Minute), true)); got[0].Result != "invalid" || got[0].TicketID != nil {
		t.Errorf("a forged code admitted offline = %+v, want invalid", got[0])
	}
	if at := v.scannedAt(t, tickets[1].id); at != nil {
		t.Errorf("a forged code's upload admitted the ticket it names, at %v", at)
	}
	admissionsAreOne(t, v)
}

// TestRevokedKeyUploadsWhatItScannedBefore: the organizer revokes a door's key
// while the door holds scans it made offline. Its upload is heard: the scans
// dated before the revocation are settled and marked so in the audit, those
// after it (or not believable) are key_revoked and not recorded. Live, the key
// is refused, and so are its keyset and revocations; an unknown key's upload
// is 401.
func TestRevokedKeyUploadsWhatItScannedBefore(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 4)
	keyID, key := newScannerKey(t, v.testServer, v.org, v.event)
	v.keysMadeAgo(t, time.Hour)
	before := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	if a := v.request(t, "DELETE", "/v1/scanner-keys/"+keyID, "", v.org.bearer()...); a.StatusCode != 204 {
		t.Fatalf("revoke the key = %d %s", a.StatusCode, a.raw)
	}
	after := time.Now()

	if a := v.scanTB(t, key, tickets[3].code); a.StatusCode != 401 {
		t.Errorf("a live scan with the revoked key = %d, want 401", a.StatusCode)
	}
	for _, path := range []string{"/v1/scanner/keyset", "/v1/scanner/revocations"} {
		if a := v.request(t, "GET", path, "", "X-Api-Key", key); a.StatusCode != 401 {
			t.Errorf("GET %s with the revoked key = %d, want 401", path, a.StatusCode)
		}
	}
	scans := []string{
		deviceScan("d-1", tickets[0].code, before, true),                   // admitted offline before: settled
		deviceScan("d-2", tickets[1].code, before.Add(time.Second), false), // queued before: decided now
		deviceScan("d-3", tickets[2].code, after, true),                    // after the revocation
		deviceScan("d-4", tickets[3].code, time.Unix(0, 0), true),          // not believable
	}
	got := v.upload(t, key, scans...)
	want := []string{"admitted", "admitted", "key_revoked", "key_revoked"}
	for i, st := range got {
		if st.Result != want[i] || st.Result == "key_revoked" && (st.TicketID != nil || st.FirstScannedAt != nil) {
			t.Errorf("scan %s = %+v, want %s", st.DeviceScanID, st, want[i])
		}
	}
	if again := v.upload(t, key, scans...); again[0].Result != "admitted" || !again[0].Replayed || again[2].Result != "key_revoked" {
		t.Errorf("the same upload again = %+v", again)
	}
	if at := v.scannedAt(t, tickets[0].id); at == nil || !at.Equal(before) {
		t.Errorf("ticket 0 scanned at %v, want the offline admission's %v", at, before)
	}

	page := as[struct {
		Scans []struct {
			TicketID        *string `json:"ticket_id"`
			AfterKeyRevoked bool    `json:"uploaded_after_key_revoked"`
		} `json:"scans"`
	}](t, v.request(t, "GET", "/v1/events/"+v.event+"/scans", "", v.org.bearer()...))
	marked := map[string]bool{}
	for _, s := range page.Scans {
		if s.TicketID != nil && s.AfterKeyRevoked {
			marked[*s.TicketID] = true
		}
	}
	if len(page.Scans) != 2 || !marked[tickets[0].id] || !marked[tickets[1].id] {
		t.Errorf("the audit = %+v, want tickets 0 and 1 marked uploaded after the key was revoked, nothing else", page.Scans)
	}
	// What the revoked key could not upload was not admitted: another door admits it.
	other := v.key(t, v.event)
	if a := v.scanTB(t, other, tickets[2].code); a.StatusCode != 200 {
		t.Errorf("ticket 2 at another door = %d %s, want admitted", a.StatusCode, a.raw)
	}
	unknown := "sdk_" + strings.Repeat("A", 43)
	if a := v.uploadAnswer(t, unknown, deviceScan("u-1", tickets[3].code, before, true)); a.StatusCode != 401 {
		t.Errorf("an unknown key's upload = %d %s, want 401", a.StatusCode, a.raw)
	}
	admissionsAreOne(t, v)
}

// TestUploadedDatesAreBelievedWithinAWindow: a device's date is believed only
// between the later of its key's making and its last upload, and now; a scan
// it only queued never takes the place of an admission, whatever its date;
// and each displacement turns the displaced admission itself into the
// conflict, so that a ticket has one admitted row, always.
func TestUploadedDatesAreBelievedWithinAWindow(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 6)
	door, gate, north := v.key(t, v.event), v.key(t, v.event), v.key(t, v.event)
	v.keysMadeAgo(t, time.Hour)
	base := time.Now().Truncate(time.Millisecond)

	// Ticket 0, admitted online; a scan queued (not admitted) offline, dated
	// before, is already_scanned: it does not take the admission's place.
	live := as[admissionJSON](t, v.scanTB(t, gate, tickets[0].code)).ScannedAt
	if got := v.upload(t, door, deviceScan("q-1", tickets[0].code, base.Add(-30*time.Minute), false)); got[0].Result != "already_scanned" || !got[0].FirstScannedAt.Equal(live) {
		t.Errorf("a queued scan dated before the admission = %+v, want already_scanned at %v", got[0], live)
	}
	// 1970, two hours ago (before the key was made) and an hour ahead: taken as
	// made when they arrive.
	sent := time.Now()
	got := v.upload(t, gate,
		deviceScan("g-1", tickets[1].code, time.Unix(0, 0), true),
		deviceScan("g-2", tickets[2].code, base.Add(-2*time.Hour), true),
		deviceScan("g-3", tickets[3].code, base.Add(time.Hour), true),
		deviceScan("g-4", tickets[0].code, time.Unix(0, 0), true))
	for _, st := range got[:3] {
		if st.Result != "admitted" || st.FirstScannedAt == nil || st.FirstScannedAt.Before(sent.Add(-time.Second)) || st.FirstScannedAt.After(time.Now()) {
			t.Errorf("scan %s = %+v, want admitted at its arrival (after %v)", st.DeviceScanID, st, sent)
		}
	}
	if got[3].Result != "conflict" || !got[3].FirstScannedAt.Equal(live) {
		t.Errorf("a 1970 offline admission of the ticket admitted online = %+v, want a conflict after the admission at %v", got[3], live)
	}

	// North uploads a scan of 10 minutes ago; one of 20 minutes ago, before
	// it, is taken as made on arrival (a conflict); one of 5 minutes ago takes
	// the place of the gate's admission, which becomes the conflict.
	if got := v.upload(t, north, deviceScan("n-1", tickets[5].code, base.Add(-10*time.Minute), true)); got[0].Result != "admitted" {
		t.Fatalf("north's first upload = %+v", got[0])
	}
	live4 := as[admissionJSON](t, v.scanTB(t, gate, tickets[4].code)).ScannedAt
	if got := v.upload(t, north, deviceScan("n-2", tickets[4].code, base.Add(-20*time.Minute), true)); got[0].Result != "conflict" {
		t.Errorf("an offline admission dated before north's last upload = %+v, want conflict (dated on arrival)", got[0])
	}
	if got := v.upload(t, north, deviceScan("n-3", tickets[4].code, base.Add(-5*time.Minute), true)); got[0].Result != "admitted" {
		t.Errorf("an offline admission dated before the gate's, after north's last upload = %+v, want admitted", got[0])
	}
	var gateRow string
	if err := v.DB.QueryRow(context.Background(), `SELECT result FROM scans WHERE ticket_id = $1 AND scanned_at = $2 AND device_scan_id IS NULL`,
		tickets[4].id, live4).Scan(&gateRow); err != nil || gateRow != "conflict" {
		t.Errorf("the gate's displaced admission is %q (%v), want conflict", gateRow, err)
	}

	// Ticket 5: two more offline admissions, each earlier, uploaded one after
	// the other by fresh doors: the earliest is the admission, and each
	// displaced row is a conflict once.
	k1, k2 := v.key(t, v.event), v.key(t, v.event)
	v.keysMadeAgo(t, time.Hour)
	v.upload(t, k1, deviceScan("k1", tickets[5].code, base.Add(-12*time.Minute), true))
	v.upload(t, k2, deviceScan("k2", tickets[5].code, base.Add(-14*time.Minute), true))
	var results []string
	rows, err := v.DB.Query(context.Background(), `SELECT result FROM scans WHERE ticket_id = $1 ORDER BY scanned_at`, tickets[5].id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r string
		rows.Scan(&r)
		results = append(results, r)
	}
	if fmt.Sprint(results) != "[admitted conflict conflict]" {
		t.Errorf("ticket 5's audit, earliest first = %v, want [admitted conflict conflict]", results)
	}

	// The audit says what the device said when it was not believed.
	page := as[struct {
		Scans []struct {
			DeviceScannedAt *time.Time `json:"device_scanned_at"`
			Offline         bool       `json:"offline"`
		} `json:"scans"`
	}](t, v.request(t, "GET", "/v1/events/"+v.event+"/scans", "", v.org.bearer()...))
	disbelieved := 0
	for _, s := range page.Scans {
		if s.DeviceScannedAt != nil {
			disbelieved++
		}
	}
	if disbelieved != 5 {
		t.Errorf("%d scans in the audit carry the device's date, want the 5 not believed", disbelieved)
	}
	admissionsAreOne(t, v)
}

// TestReplaysAnswerFromWhatWasStored: an upload replayed with other codes,
// another organizer's ticket among them, answers what was stored for each
// device scan, and nothing about that ticket.
func TestReplaysAnswerFromWhatWasStored(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 1)
	key := v.key(t, v.event)
	other := &venue{testServer: v.testServer, org: newAccount(t, v.testServer, auth.Organizer), buyer: v.buyer}
	other.event, other.seats = newEvent(t, v.testServer, other.org, eventBody(1, 5))
	theirs := other.buy(t, 1)
	_, theirKey := newScannerKey(t, v.testServer, other.org, "")
	if a := v.scanTB(t, theirKey, theirs[0].code); a.StatusCode != 200 {
		t.Fatalf("their scan = %d %s", a.StatusCode, a.raw)
	}
	v.keysMadeAgo(t, time.Hour)
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)

	first := v.upload(t, key, deviceScan("d-1", "NOT-A-TICKET", at, false), deviceScan("d-2", tickets[0].code, at, true))
	if first[0].Result != "invalid" || first[1].Result != "admitted" {
		t.Fatalf("the upload = %+v", first)
	}
	replay := v.upload(t, key, deviceScan("d-1", theirs[0].code, at, true), deviceScan("d-2", theirs[0].code, at, true))
	if r := replay[0]; !r.Replayed || r.Result != "invalid" || r.TicketID != nil || r.FirstScannedAt != nil {
		t.Errorf("d-1 replayed with their code = %+v, want what was stored: invalid, no ticket, no time", r)
	}
	if r := replay[1]; !r.Replayed || r.Result != "admitted" || r.TicketID == nil || *r.TicketID != tickets[0].id || !r.FirstScannedAt.Equal(at) {
		t.Errorf("d-2 replayed with their code = %+v, want what was stored: admitted, ticket %s at %v", r, tickets[0].id, at)
	}
}

// TestScannerKeyLimitsUploadsKeysetAndRevocations: an upload is a token of
// scanner-key a scan, as scans online are: past the bucket, the answer lists
// the scans settled and the rest wait; then the upload, the keyset and the
// revocations are 429 like a scan.
func TestScannerKeyLimitsUploadsKeysetAndRevocations(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil, "STAGEDOOR_LIMIT_SCANNER_KEY", "10/1h burst 10")
	key, fresh := v.key(t, v.event), v.key(t, v.event)
	v.keysMadeAgo(t, time.Hour)
	base := time.Now().Add(-30 * time.Minute)
	junk := make([]string, 50)
	for i := range junk {
		junk[i] = deviceScan(fmt.Sprintf("j-%d", i), fmt.Sprintf("JUNK%03d", i), base.Add(time.Duration(i)*time.Second), false)
	}
	a := v.uploadAnswer(t, key, junk...)
	results := as[struct {
		Results []settledJSON `json:"results"`
	}](t, a).Results
	if a.StatusCode != 200 || len(results) != 10 || results[0].DeviceScanID != "j-0" || results[9].DeviceScanID != "j-9" {
		t.Fatalf("an upload of 50 scans with 10 tokens = %d, %d results (%s), want the 10 oldest", a.StatusCode, len(results), a.raw)
	}
	if h := a.Header.Get("RateLimit"); !strings.HasPrefix(h, `"scanner-key";r=0;`) {
		t.Errorf("RateLimit = %q, want the scanner-key bucket empty", h)
	}
	for _, r := range []answer{
		v.uploadAnswer(t, key, junk[10:]...),
		v.request(t, "GET", "/v1/scanner/keyset", "", "X-Api-Key", key),
		v.request(t, "GET", "/v1/scanner/revocations", "", "X-Api-Key", key),
	} {
		if p := r.problem(t); r.StatusCode != 429 || p.Limit != "scanner-key" {
			t.Errorf("with the bucket empty = %d %s, want 429 scanner-key", r.StatusCode, r.raw)
		}
	}
	if a := v.request(t, "GET", "/v1/scanner/keyset", "", "X-Api-Key", fresh); a.StatusCode != 200 || a.Header.Get("RateLimit-Policy") != `"scanner-key";q=10;w=3600` {
		t.Errorf("another key's keyset = %d, RateLimit-Policy %q", a.StatusCode, a.Header.Get("RateLimit-Policy"))
	}
	var rows int
	if err := v.DB.QueryRow(context.Background(), `SELECT count(*) FROM scans`).Scan(&rows); err != nil || rows != 10 {
		t.Errorf("%d rows in the audit (%v), want the 10 scans settled", rows, err)
	}
}

// TestJunkScansGetAnEventOrAreNotStoredAndArePurged: a scan of a code that is
// no ticket of the key's organizer is listed under the key's event, or the
// organizer's event a signed code names, or not stored; the janitor deletes
// the rows of no event that older versions wrote, and rows of no ticket after
// 30 days, and nothing else.
func TestJunkScansGetAnEventOrAreNotStoredAndArePurged(t *testing.T) {
	t.Parallel()
	v := newVenue(t, nil)
	tickets := v.buy(t, 2)
	stranger := newAccount(t, v.testServer, auth.Organizer)
	unbound, bound := v.key(t, ""), v.key(t, v.event)
	_, strangers := newScannerKey(t, v.testServer, stranger, "")
	v.keysMadeAgo(t, time.Hour)
	at := time.Now().Add(-time.Minute)
	ctx := context.Background()

	wantRejected(t, "junk, unbound key", v.scanTB(t, unbound, "JUNK-1"), 404, "invalid")
	wantRejected(t, "another organizer's ticket", v.scanTB(t, strangers, tickets[0].code), 404, "invalid")
	if got := v.upload(t, unbound, deviceScan("u-1", "JUNK-2", at, false)); got[0].Result != "invalid" {
		t.Errorf("junk uploaded = %+v", got[0])
	}
	if got := v.upload(t, strangers, deviceScan("s-1", tickets[0].code, at, true)); got[0].Result != "invalid" {
		t.Errorf("another organizer's ticket uploaded = %+v", got[0])
	}
	var rows int
	if err := v.DB.QueryRow(ctx, `SELECT count(*) FROM scans`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d rows (%v) after scans of no event of the keys' organizers, want none", rows, err)
	}
	wantRejected(t, "a forged code of the organizer's event", v.scanTB(t, unbound, forge(tickets[0].code)), 404, "invalid")
	wantRejected(t, "junk, bound key", v.scanTB(t, bound, "JUNK-3"), 404, "invalid")
	if got := auditResults(t, v.testServer, v.org, v.event, 0); fmt.Sprint(got) != "[invalid invalid]" {
		t.Errorf("the event's audit = %v, want the two invalid scans", got)
	}

	// What older versions left: junk of no event; and a month-old night.
	if a := v.scanTB(t, bound, tickets[1].code); a.StatusCode != 200 {
		t.Fatalf("scan = %d", a.StatusCode)
	}
	if _, err := v.DB.Exec(ctx, `INSERT INTO scans (scanner_key_id, code_hash, code_prefix, result)
		SELECT scanner_key_id, code_hash, code_prefix, 'invalid' FROM scans, generate_series(1, 3)
		WHERE result = 'invalid' LIMIT 3`); err != nil {
		t.Fatal(err)
	}
	if _, err := v.DB.Exec(ctx, `UPDATE scans SET received_at = now() - interval '31 days'
		WHERE id = (SELECT min(id) FROM scans WHERE event_id IS NOT NULL AND result = 'invalid') OR result = 'admitted'`); err != nil {
		t.Fatal(err)
	}
	deleted, err := v.Janitor.RunOnce(ctx)
	if err != nil || deleted["scans_of_no_ticket"] != 4 {
		t.Fatalf("the janitor deleted %v (%v), want 4 scans of no ticket", deleted, err)
	}
	if got := auditResults(t, v.testServer, v.org, v.event, 0); fmt.Sprint(got) != "[admitted invalid]" {
		t.Errorf("the event's audit after the janitor = %v, want the admission and the recent invalid scan", got)
	}
}
