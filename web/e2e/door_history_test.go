package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/stagedoor/stagedoor/internal/ticketsign"
)

// TestDoorRefusesRespelledCodes: a code's last character has 4 unused bits,
// so 16 spellings decode to its bytes. The door's parser takes only the code
// as issued; offline, a respelling is invalid (not admitted, not queued),
// and the code itself is then admitted.
func TestDoorRefusesRespelledCodes(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 1)
	b := newBrowser(t, d.s)
	b.setUpDoor(d.key)
	code := d.tickets[0].Code
	spellings := ticketsign.Respellings(code)
	if len(spellings) != 15 {
		t.Fatalf("%d respellings, want 15", len(spellings))
	}
	raw, _ := json.Marshal(append([]string{code}, spellings...))
	var parsed []*struct {
		TicketID string `json:"ticketId"`
	}
	if err := json.Unmarshal(b.eval(`import("/ui/js/door/offline.js").then(m => `+string(raw)+`.map(c => {
		const p = m.parseSigned(c); return p && { ticketId: p.ticketId }; }))`), &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed[0] == nil || parsed[0].TicketID != d.tickets[0].ID {
		t.Fatalf("the door's parser reads the code as %+v, want ticket %s", parsed[0], d.tickets[0].ID)
	}
	for i, p := range parsed[1:] {
		if p != nil {
			t.Errorf("the door's parser takes respelling %d (…%s) as ticket %s", i+1, spellings[i][150:], p.TicketID)
		}
	}

	b.blockAPI(true)
	b.scanTyped("NOT-SIGNED-FIRST") // the first scan finds the network down
	for _, r := range spellings[:3] {
		if v := b.scanTyped(r); !strings.HasPrefix(v, "Invalid") {
			t.Errorf("a respelled code offline: %q, want Invalid", v)
		}
	}
	if q := b.text("#count-queued"); q != "1" {
		t.Errorf("%s scans queued, want only the unsigned one: a respelling is refused, not queued", q)
	}
	if v := b.scanTyped(code); !strings.HasPrefix(v, "Admitted") {
		t.Errorf("the code as issued, offline: %q, want Admitted", v)
	}
}

// TestDoorSaysItsKeyWasRevoked: offline, the door admits a ticket; the
// organizer revokes its key; still offline, it admits another. Back online,
// it says plainly that its key was revoked (never "Online"), uploads what the
// server still takes (the admission before the revocation), lists what it
// could not upload, refuses every scan, and can be signed out.
func TestDoorSaysItsKeyWasRevoked(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 3)
	var keys struct {
		ScannerKeys []struct{ ID, Label string } `json:"scanner_keys"`
	}
	d.org.must(t, 200, "GET", "/v1/scanner-keys", nil, &keys)
	b := newBrowser(t, d.s)
	b.setUpDoor(d.key)

	b.blockAPI(true)
	if v := b.scanTyped(d.tickets[0].Code); !strings.HasPrefix(v, "Admitted") {
		t.Fatalf("offline scan before the revocation: %q", v)
	}
	d.org.must(t, 204, "DELETE", "/v1/scanner-keys/"+keys.ScannerKeys[0].ID, nil, nil)
	if v := b.scanTyped(d.tickets[1].Code); !strings.HasPrefix(v, "Admitted") {
		t.Fatalf("offline scan after the revocation: %q (the device cannot know yet)", v)
	}
	b.blockAPI(false)

	b.waitText("#network", "Key revoked")
	b.waitJS("the upload", `document.getElementById("count-queued").textContent === "0"`)
	b.waitText("#revoked-lost", "1 scan could not be uploaded")
	if net := b.text("#network"); strings.Contains(net, "Online") {
		t.Errorf("the network status says %q with a revoked key", net)
	}
	if list := b.text("#revoked-list"); !strings.Contains(list, "ticket "+d.tickets[1].ID[:8]) || strings.Contains(list, d.tickets[0].ID[:8]) {
		t.Errorf("what could not be uploaded: %q, want ticket %s only", list, d.tickets[1].ID[:8])
	}
	if v := b.scanTyped(d.tickets[2].Code); !strings.HasPrefix(v, "Key revoked") {
		t.Errorf("a scan with the key revoked: %q, want Key revoked", v)
	}
	b.eval(`document.getElementById("verdict").classList.remove("is-fresh")`) // the notice, not the verdict, in the pictures
	b.page("door-key-revoked")
	b.viewport(390, 844)
	b.noSidewaysScroll("door, key revoked")
	b.screenshot("door-key-revoked-390")
	b.viewport(1280, 900)

	// The server took the admission made before the revocation, marked so,
	// and not the one after: another door admits that ticket.
	var audit struct {
		Scans []struct {
			TicketID        *string `json:"ticket_id"`
			Result          string  `json:"result"`
			AfterKeyRevoked bool    `json:"uploaded_after_key_revoked"`
		}
	}
	d.org.must(t, 200, "GET", "/v1/events/"+d.event.ID+"/scans", nil, &audit)
	if len(audit.Scans) != 1 || *audit.Scans[0].TicketID != d.tickets[0].ID || audit.Scans[0].Result != "admitted" || !audit.Scans[0].AfterKeyRevoked {
		t.Errorf("the audit = %+v, want ticket 0's admission, uploaded after the key was revoked", audit.Scans)
	}
	var key struct{ Key string }
	d.org.must(t, 201, "POST", "/v1/scanner-keys", map[string]string{"label": "South gate", "event_id": d.event.ID}, &key)
	d.s.scanner(t, key.Key).must(t, 200, "POST", "/v1/scans", map[string]string{"code": d.tickets[1].Code}, nil)

	// Reloaded, the door still knows its key was revoked: it says so at
	// once, is not stuck starting, and offers no scanning as if all were well.
	b.run("reload the door", chromedp.Reload())
	b.waitText("#network", "Key revoked")
	b.eval(`document.getElementById("verdict").classList.remove("is-fresh")`)
	b.page("door-key-revoked-reloaded")
	if header, verdict := b.text("#network"), b.verdict(); strings.Contains(header, "Starting") || strings.Contains(verdict, "Ready") {
		t.Errorf("reloaded with its key revoked, the door says %q and %q", header, verdict)
	}
	b.viewport(390, 844)
	b.screenshot("door-key-revoked-reloaded-390")
	b.viewport(1280, 900)
	b.screenshot("door-key-revoked-reloaded-1280")

	b.clickButton("Sign out of this device") // and the page reloads
	b.run("the set-up form, after the reload", chromedp.WaitVisible(chromedp.ID("setup-key")))
	if stored := b.eval(`localStorage.getItem("stagedoor.door.key")`); string(stored) != "null" {
		t.Errorf("signed out, the device still keeps its key: %s", stored)
	}

	// The organizer's audit page says which scan came after the key's revocation.
	b.logIn(d.org.Email)
	b.open("/organizer/events/" + d.event.ID + "/scans")
	b.waitText("table", "uploaded after its key was revoked")
	b.page("audit-after-key-revoked")
	b.viewport(390, 844)
	b.noSidewaysScroll("the audit, key revoked")
	b.screenshot("audit-after-key-revoked-390")
}
