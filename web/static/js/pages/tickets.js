// The buyer's tickets (GET /v1/tickets), each with its QR code
// (GET /v1/tickets/{id}/qr, a PNG the door scans) and the code in text.
// print.css prints one ticket to a block, without the navigation.

import { get, retrying } from "../api.js";
import { h } from "../dom.js";
import { formatDateTime } from "../format.js";
import { requireUser, setTitle } from "../router.js";
import { seatName } from "../seatmap.js";

export async function ticketsPage({ main, signal }) {
  setTitle(main, "My tickets");
  if (!requireUser(main, "buyer")) return;
  const { tickets } = await retrying(() => get("/v1/tickets", { signal }), signal);
  if (tickets.length === 0) {
    main.append(h("p", {}, "You have no tickets yet. ", h("a", { href: "#/events" }, "Find an event.")));
    return;
  }

  // Each ticket names its event and seat by id: read each event and its seat
  // map once to name them.
  const eventIds = [...new Set(tickets.map((t) => t.event_id))];
  const events = new Map(await Promise.all(eventIds.map(async (id) => {
    const [event, map] = await Promise.all([
      retrying(() => get(`/v1/events/${id}`, { signal }), signal),
      retrying(() => get(`/v1/events/${id}/seats`, { signal }), signal),
    ]);
    return [id, { event, seats: new Map(map.seats.map((s) => [s.id, s])) }];
  })));

  const printButton = h("button", { type: "button", class: "secondary no-print" }, "Print tickets");
  printButton.addEventListener("click", () => window.print());
  main.append(printButton, h("ul", { class: "tickets", "aria-label": "Tickets" },
    tickets.map((t) => ticketCard(t, events.get(t.event_id)))));
}

/** A ticket's status in words; "valid" is the rest. */
const TICKET_STATUS = {
  scanned: "Used: scanned at the door",
  refunded: "Refunded: this ticket no longer admits anyone",
};

function ticketCard(ticket, { event, seats }) {
  const seat = seats.get(ticket.seat_id);
  const where = seat ? seatName(seat) : "Seat";
  const headingId = `ticket-${ticket.id}`;
  return h("li", { class: "ticket", "aria-labelledby": headingId },
    h("div", { class: "ticket-text" },
      h("h2", { id: headingId }, event.name),
      h("p", {}, event.venue, " · ", h("time", { datetime: event.starts_at }, formatDateTime(event.starts_at))),
      h("p", { class: "ticket-seat" }, where),
      h("p", { class: "ticket-status" }, TICKET_STATUS[ticket.status] || "Valid"),
      ticket.status === "refunded" ? null : h("p", {}, "Code: ", h("code", { class: "ticket-code" }, ticket.code))),
    ticket.status === "refunded" ? null : h("img", {
      class: "qr", src: `/v1/tickets/${ticket.id}/qr`, width: 220, height: 220,
      alt: `QR code of ticket ${ticket.code} (${where})`,
    }));
}

