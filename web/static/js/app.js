// Stagedoor's web front end: plain ES modules, no build step. This module
// wires the pieces and starts the router; each page is a module in pages/.

import { initNotice, showProblem } from "./notice.js";
import { initNav } from "./nav.js";
import { byId } from "./dom.js";
import { loadSession } from "./session.js";
import { route, startRouter } from "./router.js";
import { loginPage, signupPage } from "./pages/account.js";
import { eventsPage } from "./pages/events.js";
import { eventPage } from "./pages/event.js";
import { holdPage } from "./pages/hold.js";
import { ticketsPage } from "./pages/tickets.js";
import { organizerEventsPage, newEventPage } from "./pages/organizer-events.js";
import { organizerEventPage } from "./pages/organizer-event.js";
import { keysPage } from "./pages/organizer-keys.js";
import { scansPage } from "./pages/organizer-scans.js";
import { ordersPage } from "./pages/organizer-orders.js";

route("/events", eventsPage);
route("/events/:id", eventPage);
route("/holds/:id", holdPage);
route("/tickets", ticketsPage);
route("/login", loginPage);
route("/signup", signupPage);
route("/organizer", organizerEventsPage);
route("/organizer/events/new", newEventPage);
route("/organizer/events/:id", organizerEventPage);
route("/organizer/events/:id/scans", scansPage);
route("/organizer/events/:id/orders", ordersPage);
route("/organizer/keys", keysPage);
// Help is read rarely: its module is loaded when asked for.
/** @type {import("./router.js").Page} */
const helpPage = async (context) => (await import("./pages/help.js")).helpPage(context);
route("/help", helpPage);
route("/help/:topic", helpPage);

initNotice();
initNav();
// The skip link moves focus to the content; as a plain link it would change
// the hash, which is the router's.
byId("skip-link").addEventListener("click", (e) => {
  e.preventDefault();
  byId("main").focus();
});
// Who is logged in decides the navigation and some pages: ask first, then draw.
loadSession()
  .catch((err) => showProblem(err))
  .finally(startRouter);
