// Formatting of money, dates and durations (format.js). The script that runs
// these tests sets the locale (en-US) and the time zone (UTC).
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  formatClock, formatDateTime, formatDateTimeSeconds, formatMoney, formatTime, formatWait,
  localInputToISO, plural, toCents, toLocalInput,
} from "../static/js/format.js";

test("the tests run in en-US and UTC", () => {
  const { locale, timeZone } = Intl.DateTimeFormat().resolvedOptions();
  assert.equal(locale, "en-US");
  assert.equal(timeZone, "UTC");
});

test("money is integer cents shown in the currency", () => {
  assert.equal(formatMoney(4500, "USD"), "$45.00");
  assert.equal(formatMoney(5, "USD"), "$0.05");
  assert.equal(formatMoney(123456789, "USD"), "$1,234,567.89");
  assert.equal(formatMoney(4550, "EUR"), "€45.50");
});

test("an amount typed in units is read as cents, without floating point", () => {
  const cases = { "45": 4500, "45.5": 4550, "45.50": 4550, "45,05": 4505, " 0.29 ": 29, "45.": 4500, "999999999.99": 99999999999 };
  for (const [text, cents] of Object.entries(cases)) assert.equal(toCents(text), cents, text);
  for (const bad of ["", "abc", "-1", "45.555", "1e3", "$45", "1234567890", ".5"]) {
    assert.ok(Number.isNaN(toCents(bad)), `${bad} is no amount`);
  }
});

test("dates and times from RFC 3339", () => {
  assert.equal(formatDateTime("2030-09-01T19:30:05Z"), "Sep 1, 2030, 7:30 PM");
  assert.equal(formatDateTimeSeconds("2030-09-01T19:30:05Z"), "Sep 1, 2030, 7:30:05 PM");
  assert.equal(formatTime("2030-09-01T19:30:05+02:00"), "5:30 PM");
});

test("a countdown in minutes and seconds, hours past an hour, rounded up", () => {
  assert.equal(formatClock(545_000), "9:05");
  assert.equal(formatClock(3_723_000), "1:02:03");
  assert.equal(formatClock(100), "0:01");
  assert.equal(formatClock(0), "0:00");
  assert.equal(formatClock(-5000), "0:00");
  assert.equal(formatClock(59_001), "1:00");
});

test("a wait in words", () => {
  assert.equal(formatWait(0.4), "less than a second");
  assert.equal(formatWait(1), "1 second");
  assert.equal(formatWait(12.4), "12 seconds");
  assert.equal(formatWait(60), "about 1 minute");
  assert.equal(formatWait(170), "about 3 minutes");
});

test("plurals", () => {
  assert.equal(plural(1, "seat"), "1 seat");
  assert.equal(plural(0, "seat"), "0 seats");
  assert.equal(plural(2, "ticket"), "2 tickets");
});

test("datetime-local values to UTC and back", () => {
  assert.equal(localInputToISO("2030-09-01T19:30"), "2030-09-01T19:30:00.000Z");
  assert.equal(toLocalInput(new Date("2030-01-02T03:04:59Z")), "2030-01-02T03:04");
  assert.equal(localInputToISO(toLocalInput(new Date("2031-12-31T23:59:00Z"))), "2031-12-31T23:59:00.000Z");
});
