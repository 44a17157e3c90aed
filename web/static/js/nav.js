// The site's navigation, drawn from who is logged in: buyers see their
// tickets, organizers their events and scanner keys.

import { byId, h, replace } from "./dom.js";
import { logOut, onSessionChange } from "./session.js";
import { go } from "./router.js";

/** @param {import("./types.js").Principal | null} user */
function draw(user) {
  const nav = byId("nav");
  const items = [link("#/events", "Events")];
  if (user?.kind === "buyer") items.push(link("#/tickets", "My tickets"));
  if (user?.kind === "organizer") {
    items.push(link("#/organizer", "My events"), link("#/organizer/events/new", "New event"),
      link("#/organizer/keys", "Scanner keys"));
  }
  if (user) {
    items.push(h("li", { class: "who" }, h("span", { class: "email" }, user.email)));
    items.push(h("li", {}, h("button", { type: "button", class: "link-button", onclick: onLogOut }, "Log out")));
  } else {
    items.push(link("#/login", "Log in"), link("#/signup", "Sign up"));
  }
  replace(nav, h("ul", {}, items));
  markCurrent();
}

/**
 * @param {string} href
 * @param {string} text
 */
function link(href, text) {
  return h("li", {}, h("a", { href }, text));
}

/** aria-current="page" on the link of the page shown. */
function markCurrent() {
  const here = location.hash.split("?")[0] || "#/events";
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") === here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function onLogOut() {
  await logOut().catch(() => {});
  go("/events", "You are logged out.");
}

/** Draws the navigation now and whenever who is logged in changes. */
export function initNav() {
  onSessionChange(draw);
  window.addEventListener("hashchange", markCurrent);
  draw(null);
}
