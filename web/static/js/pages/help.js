// Help for people, one page per situation a buyer meets (#/help/held-seats,
// waiting-room, busy, payment) and an index (#/help). The notice's "What this
// means" links here (buyer-words.js names the topic of each problem); the
// developer's pages about problem types are /problems/{slug} and /docs/.
// The numbers are Stagedoor's defaults (docs/configuration.md): a hold lasts
// STAGEDOOR_HOLD_TTL (10 minutes), a buyer holds at most
// STAGEDOOR_MAX_HELD_SEATS (10), seats given back cool for
// STAGEDOOR_REHOLD_COOLDOWN (a minute), a waiting room's turn lasts 15 minutes.

import { h } from "../dom.js";
import { setTitle } from "../router.js";

/**
 * A help page: its title, one line for the index, and its sections (a
 * heading and paragraphs).
 * @typedef {{title: string, summary: string, sections: [string, string[]][]}} HelpPage
 */

/** @type {Record<import("../buyer-words.js").HelpTopic, HelpPage>} */
export const HELP = {
  "held-seats": {
    title: "Holding seats",
    summary: "How long seats stay yours while you pay, and how many you can hold.",
    sections: [
      ["What a hold is", [
        "When you choose seats and press Hold, they are kept for you alone while you pay: nobody else can take them. "
          + "The hold page counts down the time left, usually 10 minutes.",
        "If the time runs out before you pay, the seats go back on sale and anyone may take them. Choose them again if they are still free.",
      ]],
      ["How many seats", [
        "You can hold a limited number of seats of one event at once, usually 10, counting seats you are paying for. "
          + "Seats you have bought don't count. To choose more, pay for the seats you hold or give some back first.",
      ]],
      ["Seats taken or sold out", [
        "Someone else may hold or buy a seat a moment before you do. Nothing is held then: choose other seats. "
          + "Seats and places that others give back, or whose hold runs out, go on sale again, so a sold-out section may have room later.",
      ]],
      ["Giving seats back", [
        "You can give seats back from the hold page. You can't hold those same seats again for about a minute, "
          + "so that others get a fair chance at them; you may choose other seats at once.",
      ]],
    ],
  },
  "waiting-room": {
    title: "The waiting room",
    summary: "Why some sales have a queue, and how your turn works.",
    sections: [
      ["Why there is a queue", [
        "Popular sales open with a waiting room, so that everyone gets a fair turn instead of a race. "
          + "Keep the page open: it shows your place and updates by itself.",
      ]],
      ["Your place", [
        "Everyone who joins before the sale opens gets a place drawn at random, so there is no need to arrive first. "
          + "People who join after the sale opens queue in the order they came. Buyers are let in a few at a time.",
      ]],
      ["When it's your turn", [
        "You then have 15 minutes to choose and hold seats. Holding seats starts the hold's own countdown, so you can finish paying after that.",
        "If your turn ends, or the page says your place was lost, join the queue again from the event's page.",
      ]],
      ["Paused", [
        "The organizer may pause the queue for a while. You keep your place; it moves again when the queue resumes.",
      ]],
    ],
  },
  busy: {
    title: "When Stagedoor is busy",
    summary: "Why you may be asked to wait a moment, and what to do.",
    sections: [
      ["Too many tries", [
        "To keep the sale fair and safe, each buyer can do some things only so often: hold seats, try to pay, log in, "
          + "send tickets to friends. If you do one too often in a short time, the page asks you to wait and shows how long.",
      ]],
      ["Too much at once", [
        "If many pages or tabs of yours load at the same time, some are asked to wait a few seconds. Closing other tabs helps.",
      ]],
      ["Very busy", [
        "At the busiest moments Stagedoor may turn some requests away for a few seconds to keep the sale running for everyone. "
          + "Nothing was done when that happens: the page says when to try again, and often tries again by itself.",
      ]],
      ["Your seats", [
        "Waiting does not cost you your seats: a hold keeps them until its countdown ends.",
      ]],
    ],
  },
  payment: {
    title: "Paying for tickets",
    summary: "Declined cards, payments that can't go through, and refunds.",
    sections: [
      ["A declined card", [
        "Your bank or card provider said no. Nothing was charged, and your seats stay held until the hold's countdown ends: "
          + "try another card.",
      ]],
      ["Payments not working", [
        "Sometimes the payment service doesn't answer. Nothing is charged then, and your seats stay held. "
          + "The page tries again by itself a couple of times, then leaves it to you: try again a little later, or with another card.",
      ]],
      ["Confirming a payment", [
        "Once in a while a payment takes longer to confirm. You can leave the page: your tickets appear in My tickets when it is confirmed. "
          + "If it can't be confirmed, the seats go back on sale and any charge is refunded, never kept.",
      ]],
      ["Too many payment attempts", [
        "You can try to pay only a few times within some minutes. Wait for the countdown, then try again: your seats stay held meanwhile.",
      ]],
      ["Refunds", [
        "Some events let you refund tickets yourself from My tickets until a date the organizer chose. After that, or for tickets used at the door, "
          + "ask the organizer. A refunded ticket no longer admits anyone.",
      ]],
    ],
  },
};

/** @type {import("../router.js").Page} */
export async function helpPage({ main, params }) {
  const topic = params.topic;
  const page = topic && Object.hasOwn(HELP, topic) ? HELP[/** @type {keyof typeof HELP} */ (topic)] : null;
  if (!page) {
    setTitle(main, "Help");
    main.append(h("ul", { class: "help-topics" }, Object.entries(HELP).map(([key, p]) => h("li", {},
      h("a", { href: `#/help/${key}` }, p.title), " — ", p.summary))));
    return;
  }
  setTitle(main, page.title);
  main.append(h("p", { class: "lead" }, page.summary),
    ...page.sections.flatMap(([heading, paragraphs]) => [h("h2", {}, heading), ...paragraphs.map((t) => h("p", {}, t))]),
    h("p", {}, h("a", { href: "#/help" }, "All help topics"), " · ", h("a", { href: "#/events" }, "Events")));
}
