package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// references are the buyer's tickets' short references, in the order of d.tickets.
func (d *door) references(t *testing.T) []string {
	t.Helper()
	var list struct {
		Tickets []struct{ ID, Reference string }
	}
	d.buyer.must(t, 200, "GET", "/v1/tickets", nil, &list)
	byID := map[string]string{}
	for _, tk := range list.Tickets {
		byID[tk.ID] = tk.Reference
	}
	out := make([]string, len(d.tickets))
	for i, tk := range d.tickets {
		if out[i] = byID[tk.ID]; len(out[i]) != 10 {
			t.Fatalf("ticket %s has reference %q", tk.ID, out[i])
		}
	}
	return out
}

// typed is a reference as a door person types it from under the QR code:
// grouped, in lower case.
func typed(ref string) string { return strings.ToLower(ref[:4] + "-" + ref[4:8] + "-" + ref[8:]) }

// TestDoorAdmitsAReferenceOnlineAndOffline: the tickets page prints each
// ticket's reference under its QR code; typed into the door's field (at 390
// px on a touch phone, then at 1280 px) a reference admits its ticket online,
// with its seat, once; the list of the door's last scans shows the reference
// and seat, not a piece of code. With the API blocked, a reference on the list
// the device synced admits offline, with its seat; the same reference after
// another says already scanned on this device; a revoked ticket's reference is
// refused, and one on no list cannot be checked. With the API back the queue
// syncs, and the organizer's audit shows the offline admission by reference
// and seat.
func TestDoorAdmitsAReferenceOnlineAndOffline(t *testing.T) {
	t.Parallel()
	d := newDoor(t, 4)
	refs := d.references(t)
	b := newBrowser(t, d.s)

	// The tickets page: the reference under each QR code, grouped.
	b.viewport(390, 844)
	b.logIn(d.buyer.Email)
	b.goTo("/tickets")
	b.waitJS("four tickets", `document.querySelectorAll(".ticket .ticket-reference").length === 4`)
	b.imageBytes("img.qr")
	page := b.text("main")
	for _, ref := range refs {
		if !strings.Contains(page, ref[:4]+"-"+ref[4:8]+"-"+ref[8:]) {
			t.Errorf("the tickets page does not show reference %s grouped", ref)
		}
	}
	b.noSidewaysScroll("tickets with references, 390 px")
	b.page("tickets-reference-390")
	b.viewport(1280, 900)
	b.page("tickets-reference-1280")

	// The door on a phone: typed references.
	b.viewport(390, 844)
	b.touch()
	b.setUpDoor(d.key)
	b.waitJS("the references synced", `Object.keys(JSON.parse(localStorage.getItem("stagedoor.door") || "{}").references || {}).length === 4`)
	b.small("door with a typed reference, 390 px")
	if v := b.scanTyped(typed(refs[0])); !strings.HasPrefix(v, "Admitted") || !strings.Contains(v, "row A") {
		t.Errorf("a typed reference online: %q, want Admitted with the seat", v)
	}
	if n := d.scansOf(t, d.tickets[0].ID); n != 1 {
		t.Errorf("the audit has %d scans of the typed ticket, want 1", n)
	}
	b.eval(`document.getElementById("verdict").classList.remove("is-fresh")`)
	if h := b.text("#history"); !strings.Contains(h, refs[0][:4]+"-"+refs[0][4:8]+"-"+refs[0][8:]) || !strings.Contains(h, "row A") {
		t.Errorf("the last scans read %q, want the reference and seat", h)
	}
	b.noSidewaysScroll("door, typed reference, 390 px")
	b.page("door-reference-online-390")
	b.doorDark(true) // the door follows the system's dark mode; axe checks its contrast
	b.page("door-reference-online-dark-390")
	b.doorDark(false)
	if v := b.scanTyped("NOT-A-TICKET"); !strings.HasPrefix(v, "Invalid") {
		t.Errorf("junk: %q, want Invalid", v)
	}
	if v := b.scanTyped(refs[0]); !strings.HasPrefix(v, "Already scanned") {
		t.Errorf("the reference again after another code: %q, want Already scanned", v)
	}

	// The organizer revokes ticket 3; then the network fails, at 1280 px.
	d.org.must(t, 204, "DELETE", "/v1/organizer/tickets/"+d.tickets[3].ID, nil, nil)
	b.waitJS("the revocation synced", `JSON.parse(localStorage.getItem("stagedoor.door")).revoked[`+quote(d.tickets[3].ID)+`]`)
	b.viewport(1280, 900)
	b.blockAPI(true)
	if v := b.scanTyped(typed(refs[1])); !strings.HasPrefix(v, "Admitted") || !strings.Contains(v, "row A") || !strings.Contains(v, "offline") {
		t.Errorf("a typed reference offline: %q, want Admitted with the seat, offline", v)
	}
	b.waitText("#network", "Offline")
	b.eval(`document.getElementById("verdict").classList.remove("is-fresh")`)
	b.noSidewaysScroll("door, typed reference offline, 1280 px")
	b.page("door-reference-offline-1280")
	if v := b.scanTyped(typed(refs[3])); !strings.HasPrefix(v, "Revoked") {
		t.Errorf("a revoked ticket's reference offline: %q, want Revoked", v)
	}
	if v := b.scanTyped(typed(refs[1])); !strings.HasPrefix(v, "Already scanned") || !strings.Contains(v, "on this device") {
		t.Errorf("the offline reference again after another: %q, want Already scanned on this device", v)
	}
	if v := b.scanTyped("0000-0000-00"); !strings.HasPrefix(v, "Cannot check offline") {
		t.Errorf("a reference on no list: %q, want Cannot check offline", v)
	}

	b.blockAPI(false)
	b.waitJS("the queue synced", `document.getElementById("count-queued").textContent === "0"`)
	var audit struct {
		Scans []struct {
			TicketID  *string `json:"ticket_id"`
			Reference *string `json:"reference"`
			Result    string  `json:"result"`
			Offline   bool    `json:"offline"`
		}
	}
	d.org.must(t, 200, "GET", "/v1/events/"+d.event.ID+"/scans", nil, &audit)
	found := false
	for _, s := range audit.Scans {
		found = found || s.TicketID != nil && *s.TicketID == d.tickets[1].ID && s.Reference != nil && *s.Reference == refs[1] && s.Result == "admitted" && s.Offline
	}
	if !found {
		t.Errorf("the audit has no offline admission of ticket 1 by its reference: %+v", audit.Scans)
	}
	b.viewport(390, 844)
	b.page("door-reference-synced-390")

	b.open("/events")
	b.waitText("#nav", "Log out")
	b.clickButton("Log out")
	b.waitJS("logged out", `!document.querySelector("#nav")?.textContent.includes("Log out")`)
	b.logIn(d.org.Email)
	b.open("/organizer/events/" + d.event.ID + "/scans")
	b.waitText("table", refs[1][:4]+"-"+refs[1][4:8]+"-"+refs[1][8:])
	b.waitText("table", "row A")
	b.page("audit-reference-390")
	b.viewport(1280, 900)
	b.page("audit-reference-1280")
}

// doorDark emulates a system in dark mode (or not).
func (b *browser) doorDark(dark bool) {
	b.t.Helper()
	scheme := map[bool]string{true: "dark", false: "light"}[dark]
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		b.t.Fatalf("emulating %s mode: %v", scheme, err)
	}
}
