// The wallet's pure part (wallet.js): orders newest first, a ticket's look,
// and the calendar file.
import { test } from "node:test";
import assert from "node:assert/strict";

import { calendarFile, calendarFileName, escapeText, foldLine, newestFirst, ticketLook, utcStamp } from "../static/js/wallet.js";

test("orders come newest first, the same time by id", () => {
  const orders = [
    { id: "b", created_at: "2026-01-01T10:00:00Z" },
    { id: "c", created_at: "2026-03-01T10:00:00Z" },
    { id: "a", created_at: "2026-01-01T10:00:00Z" },
  ];
  assert.deepEqual(newestFirst(orders).map((o) => o.id), ["c", "a", "b"]);
  assert.equal(orders[0].id, "b", "the list given is not changed");
});

test("only a valid ticket looks live; a used, refunded or given one has its stamp", () => {
  assert.deepEqual(ticketLook("valid"), { live: true, stamp: null, className: "ticket" });
  assert.equal(ticketLook("scanned").stamp, "Used");
  assert.match(ticketLook("scanned").className, /ticket-used/);
  assert.equal(ticketLook("refunded").stamp, "Refunded");
  assert.equal(ticketLook("refund_pending").live, false);
  assert.equal(ticketLook("transferred").stamp, "Given away");
  for (const s of /** @type {const} */ (["scanned", "refunded", "refund_pending", "transferred"])) {
    assert.equal(ticketLook(s).live, false, s);
  }
});

test("iCalendar text is escaped", () => {
  assert.equal(escapeText("Rock, Paper; Scissors\\Lizard\nSpock"), "Rock\\, Paper\\; Scissors\\\\Lizard\\nSpock");
  assert.equal(escapeText("a\r\nb"), "a\\nb");
});

test("times are UTC DATE-TIMEs", () => {
  assert.equal(utcStamp(new Date("2026-09-01T19:30:05+02:00")), "20260901T173005Z");
});

test("long lines are folded at 75 octets without splitting a character", () => {
  const line = "DESCRIPTION:" + "é".repeat(100);
  const folded = foldLine(line);
  const pieces = folded.split("\r\n");
  assert.ok(pieces.length > 1);
  for (const [i, p] of pieces.entries()) {
    assert.ok(new TextEncoder().encode(p).length <= 75, `piece ${i} is ${new TextEncoder().encode(p).length} octets`);
    if (i > 0) assert.ok(p.startsWith(" "));
  }
  assert.equal(pieces.map((p, i) => (i ? p.slice(1) : p)).join(""), line);
  assert.equal(foldLine("SHORT:1"), "SHORT:1");
});

test("an event becomes one VEVENT with CRLF lines, UTC times and escaped text", () => {
  const ics = calendarFile(
    { id: "0b5e6a4e-0000-4000-8000-000000000001", name: "Night, Music; Live", venue: "Hall\\1", starts_at: "2026-09-01T19:30:00Z" },
    { url: "https://tickets.example/#/events/1", seats: ["Stalls, row A, seat 5", "Stalls, row A, seat 6"], now: new Date("2026-08-01T00:00:00Z") });
  assert.ok(ics.endsWith("\r\n"));
  assert.ok(!/[^\r]\n/.test(ics), "every line ends with CRLF");
  const lines = ics.replace(/\r\n /g, "").split("\r\n");
  assert.deepEqual(lines.slice(0, 2), ["BEGIN:VCALENDAR", "VERSION:2.0"]);
  assert.ok(lines.includes("BEGIN:VEVENT") && lines.includes("END:VEVENT"));
  assert.ok(lines.includes("UID:0b5e6a4e-0000-4000-8000-000000000001@stagedoor"));
  assert.ok(lines.includes("DTSTAMP:20260801T000000Z"));
  assert.ok(lines.includes("DTSTART:20260901T193000Z"));
  assert.ok(lines.includes("DTEND:20260901T223000Z"));
  assert.ok(lines.includes("SUMMARY:Night\\, Music\\; Live"));
  assert.ok(lines.includes("LOCATION:Hall\\\\1"));
  assert.ok(lines.some((l) => l.startsWith("DESCRIPTION:Your tickets: Stalls\\, row A\\, seat 5\\; Stalls\\, row A\\, seat 6\\nShow")));
  assert.equal(lines.at(-2), "END:VCALENDAR");
});

test("a calendar file's name is the event's name", () => {
  assert.equal(calendarFileName("Night Music: Live!"), "night-music-live.ics");
  assert.equal(calendarFileName("¡¿?!"), "event.ics");
});
